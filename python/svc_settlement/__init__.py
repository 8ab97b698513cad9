# The Python SDK of svc-settlement: the same rules and the same signed bytes as the TypeScript SDK
# (docs/sdk-python.md). `from svc_settlement import SvcClient, AsyncSvcClient`.
from .artifacts import ArtifactError, VerifiedArtifact, canonical_artifact_bytes, sign_artifact, verify_artifact
from .audit_bundle import AuditBundleReport, verify_audit_bundle
from .client import AsyncSvcClient, SvcClient
from .core import AgentIdentity
from .digests import BLAKE3_BACKEND
from .errors import (
    EngineHttpError,
    FundingFailedError,
    FundingPendingError,
    GatewayAuthError,
    InsecureGatewayUrlError,
    SvcArgumentError,
    SvcAuthenticationError,
    SvcCapabilityError,
    SvcConfigurationError,
    SvcConflictError,
    SvcConnectionError,
    SvcError,
    SvcIdempotencyError,
    SvcInvalidRequestError,
    SvcInvalidStateError,
    SvcNotFoundError,
    SvcPaymentRequiredError,
    SvcPermissionError,
    SvcRateLimitError,
    SvcRecognitionError,
    SvcResponseError,
    SvcServerError,
    SvcSigningError,
    SvcUnprocessableError,
    TenantBindingError,
    is_retryable_error,
    parse_error_body,
)
from .intents import FundChallenge, FundResult, PayeeParty, PolicyBinding, SigningParty
from .keys import SvcSigningKey, agent_key_from_seed, generate_key, key_from_seed, payee_key_from_seed, principal_key_from_seed
from .ledger import LedgerVerification
from .sandbox import (
    SANDBOX_MPP_TOKENS,
    SANDBOX_X402_PAYERS,
    decode_x402_payment_required,
    sandbox_credential,
    sandbox_mpp_authorization,
    sandbox_x402_payment_signature,
)
from .signed_structs import evidence_signing_bytes, intent_creation_signing_bytes
from .stored_login import StoredLogin, read_stored_login, stored_login_path
from .url import is_loopback_host, resolve_gateway_base_url

__version__ = "0.1.0"
__all__ = [name for name in dir() if not name.startswith("_")]
