"""The fuzz targets for hostile input, shared by tests/security/test_fuzz.py (a short run) and
bench/fuzz.py (the long run); each generator lives in the module of what it generates:
fuzz_webhooks.py (deliveries), fuzz_comments.py (comment bodies), fuzz_documents.py (issue
files and configs), fuzz_diffs.py (diffs and guard policies), on fuzz_values.py (shared parts).

Each target has a strategy and a `check_*` function that feeds one generated input to the real
code and raises `Unexpected` for any outcome the contract does not allow: a 5xx answer or an
uncaught exception from the web app, or an exception other than the documented error type from
a parser. `known_bugs=False` leaves out the input classes of the bugs reported (and pinned by
strict xfail tests) in test_fuzz.py, so that the short run stays green until they are fixed.
"""

from __future__ import annotations

from tests.kit.fuzz_comments import check_comment, comment_bodies
from tests.kit.fuzz_diffs import check_guard, diffs, policies
from tests.kit.fuzz_documents import check_config, check_issue_file, config_texts, issue_files
from tests.kit.fuzz_values import SLUG, Unexpected
from tests.kit.fuzz_webhooks import (
    SECRET,
    WEBHOOK_PATH,
    WebhookRequest,
    check_webhook_response,
    sign,
    webhook_requests,
)

__all__ = ["SECRET", "SLUG", "WEBHOOK_PATH", "Unexpected", "WebhookRequest", "check_comment", "check_config",
           "check_guard", "check_issue_file", "check_webhook_response", "comment_bodies",
           "config_texts", "diffs", "issue_files", "policies", "sign", "webhook_requests"]
