"""App JWT checks for the fake GitHub, and a throwaway RSA key for tests (needs `githubkit[auth-app]`)."""

from __future__ import annotations

import base64
import functools
import json
import time
from typing import Any


def generate_app_key() -> tuple[str, str]:
    """A fresh RSA key pair as PEM strings: (private key for AppAuthStrategy, public key for the fake)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()
    return private, public


@functools.cache
def shared_app_key() -> tuple[str, str]:
    """One key pair per test process (generating RSA keys costs ~50 ms each)."""
    return generate_app_key()


def _segment(part: str) -> Any:
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def check_jwt(token: str, *, app_id: int, public_key: str | None, leeway: int = 60) -> str | None:
    """None when `token` is an App JWT GitHub would accept, else GitHub-like reason text."""
    parts = token.split(".")
    if len(parts) != 3:
        return "A JSON web token could not be decoded"
    try:
        header, claims = _segment(parts[0]), _segment(parts[1])
    except ValueError:
        return "A JSON web token could not be decoded"
    if header.get("alg") != "RS256":
        return "A JSON web token could not be decoded"
    now = time.time()
    if not isinstance(claims.get("exp"), int) or claims["exp"] < now - leeway:
        return "'Expiration time' claim ('exp') must be a numeric value in the future"
    if not isinstance(claims.get("iat"), int) or claims["iat"] > now + leeway:
        return "'Issued at' claim ('iat') must be an Integer in the past"
    if claims["exp"] - claims["iat"] > 600 + leeway:
        return "'Expiration time' claim ('exp') is too far in the future"
    if str(claims.get("iss")) != str(app_id):
        return "Integration not found"
    if public_key is not None:
        import jwt

        try:
            options = {"verify_exp": False, "verify_iat": False}
            jwt.decode(token, public_key, algorithms=["RS256"], options=options)
        except jwt.InvalidTokenError:
            return "A JSON web token could not be decoded"
    return None
