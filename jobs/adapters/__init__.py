"""What touches the outside world for the engine, behind the ports (jobs/ports.py):

- git: `git_runner.py` (the one hardened way git is run), `workspace.py` (repositories without
  git metadata in a worktree) with `object_reader.py` (its refs, trees and files read through
  one long-lived `git cat-file --batch-command`) and `ref_updates.py` (the branch's moves,
  compare-and-set, through one long-lived `git update-ref --stdin`), `worktree.py` (a job's
  worktree, kept between steps) with
  `worktree_restore.py` (its reset at the cost of what changed) and `dir_scan.py` (the walk for
  planted `.git`, specials and empty directories, rereading only changed directories),
  `staging.py` (what a command left, read as data) with `object_writer.py` (its blobs written as
  loose objects) and `tree_writer.py` (the staged tree built from the base's, no `write-tree`),
  `index_state.py` (what the private index holds) and `known_commits.py` (the
  commits this process wrote: their trees, their ancestry), `merging.py` (the base
  merged in the object store: `git merge-tree`, the merge commit),
  `git_identity.py` (who local commits are made as, found as `git commit` finds it).
- files: `safe_paths.py` (files opened without following links), `tree_fd.py` (host-side work
  on sandbox-written trees from directory descriptors, never by path).
- programs: `host_programs.py` (Stepwise's own git, bwrap, unshare and mount, found only on
  the absolute entries of the worker's PATH).
- the sandbox: `sandbox.py` (bubblewrap) with `sandbox_process.py` (the process group, timeout,
  and its output read from a pipe, only its head and tail kept), `sandbox_view.py` (the fixed
  repository path, environment binds), `sandbox_reach.py` (what is bound back from the places
  the sandbox hides: PATH's tools, `env`'s paths; why a program is not seen),
  `sandbox_hardening.py` (what bubblewrap takes away: every capability, nested user
  namespaces, and the syscalls its seccomp filter denies), `scratch.py` (a validation's
  writes kept apart from the worktree in an overlay, and the record of what Stepwise wrote
  there, so a reset puts back only that); `egress.py` (the allowlisting
  egress proxy) and `egress_forward.py` (its
  forwarder inside the sandbox), `egress_defaults.py` (the default allowlist: the ecosystems'
  registries and the configured package indexes, each with why), `allowlist_cache.py` (its
  part a commit decides, once per base commit).
- `environments.py` (the environment cache) with `toolchain.py` (the toolchain part of its key)
  and `baselines.py` (recorded baseline results reused).
- `store.py` (the file store) and `codec.py` (the document format both stores share),
  `local_forge.py` (local mode's forge).

Contract: the engine reaches these through their ports only (an import contract), asking for
what it wants by name, never with a git argv; nothing a
repository's files or the sandbox contain decides what runs outside the sandbox.
"""
