# Stepwise: one image for the web app (`stepwise serve`) and the workers (`stepwise worker`).
# The toolchains repositories' `setup` and `validate` commands find: Python (3.12 by default,
# `--build-arg PYTHON_VERSION=3.11` for 3.11; venv and pip included) and Node.js 22 (a maintained
# LTS release, with npm). For another toolchain, build FROM this image (see docs/guides/environments.md).
# Linted by hadolint in the test suite (tests/test_deploy_files.py); no container engine runs
# there, so the image itself is built by whoever deploys it (docs/operating.md).
ARG PYTHON_VERSION=3.12
ARG NODE_VERSION=22

# Node.js from the official image's binaries (Debian 12's own nodejs is 18, past its end of life).
FROM node:${NODE_VERSION}-bookworm-slim AS node

FROM python:${PYTHON_VERSION}-slim-bookworm
SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# libseccomp2: the sandbox's seccomp filter (jobs/adapters/sandbox_hardening.py) is built with it
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git bubblewrap libseccomp2 ca-certificates \
    && rm -rf /var/lib/apt/lists/*

COPY --from=node /usr/local/bin/node /usr/local/bin/node
COPY --from=node /usr/local/lib/node_modules /usr/local/lib/node_modules
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
    && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
    && node --version && npm --version

# The non-root user the processes run as, and the work folder (clones, worktrees, job
# environments) created and owned by it, so a volume mounted there starts writable.
RUN useradd --create-home --uid 10001 stepwise \
    && mkdir -p /var/lib/stepwise \
    && chown stepwise:stepwise /var/lib/stepwise

WORKDIR /app
# The tested versions (requirements.lock) first, so a code change reuses this layer.
COPY requirements.lock pyproject.toml README.md ./
COPY bot ./bot
COPY jobs ./jobs
RUN pip install --no-cache-dir -c requirements.lock .

USER 10001:10001
ENV STEPWISE_WORKDIR=/var/lib/stepwise
# Job environments built by `setup` are cached here (least recently used evicted past the size).
ENV STEPWISE_ENV_CACHE_MB=4096
VOLUME ["/var/lib/stepwise"]
EXPOSE 8000
CMD ["stepwise", "--help"]
