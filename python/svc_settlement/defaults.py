# Every default and bound of the SDK in one place, each with its reason; the same values as the TypeScript SDK.

# Where a self-hosted gateway listens out of the box (`npm start`): loopback, so plain http is allowed.
GATEWAY_BASE_URL_DEFAULT = "http://127.0.0.1:8080"

# Total attempts of one request, the first included; more than the limit is a configuration error.
ATTEMPTS_MAX_DEFAULT = 3
ATTEMPTS_MAX_LIMIT = 10

# Per-attempt timeout: an answer slower than this is a network failure.
REQUEST_TIMEOUT_SECONDS_DEFAULT = 30.0
# The time one request may take over all its attempts and backoff delays together.
RETRY_BUDGET_SECONDS_DEFAULT = 60.0

# Backoff: min(base · 2^retry + U[0, jitter), max).
RETRY_BACKOFF_BASE_SECONDS = 0.2
RETRY_BACKOFF_JITTER_SECONDS = 0.1
RETRY_BACKOFF_MAX_SECONDS = 5.0
# `Retry-After` is honoured up to this; a server asking for more is capped, not obeyed.
RETRY_AFTER_MAX_SECONDS = 30.0
# How long a request answered 409 `idempotency.request_in_progress` is retried (same key and body, with backoff),
# from the first such answer: another request under its key is still running, or died mid-call and is taken over
# once its claim's 3 s lease is over. These retries do not count against `attempts_max`; the budget still applies.
REQUEST_IN_PROGRESS_RETRY_SECONDS_MAX = 20.0

# Funding polls while the rail answers 202: every 2 s, up to 30 times.
FUND_POLL_INTERVAL_SECONDS_DEFAULT = 2.0
FUND_POLLS_MAX_DEFAULT = 30

# The engine's idempotency-key length (1 to 256 characters).
IDEMPOTENCY_KEY_LENGTH_MAX = 256

# Ledger events per page when the SDK walks the chain (the route allows 1 to 256).
LEDGER_EVENTS_PAGE_SIZE = 256
# Pages of policy versions read while looking for one, so a corrupt cursor cannot loop forever.
POLICY_VERSION_PAGES_MAX = 100

# Sent as `user-agent` so operators can tell SDK traffic apart in their logs.
SDK_USER_AGENT = "svc-sdk-python/0.1.0"
