# The Python SDK's tests (pytest); test/python/sdk.test.ts runs them against a live server.
