"""The provider-compatible gateway: harnesses' model calls in, `ModelRequest`s out, replies back."""

from polar.harnesses.gateway.server import Gateway, GatewaySession, PendingCall

__all__ = ["Gateway", "GatewaySession", "PendingCall"]
