# Verifying a linkhooks delivery in the Standard Webhooks form, in Python (standard library only).
# Usage: python3 verify_standard_webhooks.py <body file> <secret> <webhook-id> <webhook-timestamp>
#                                            <webhook-signature> [now, Unix seconds]
import base64
import binascii
import hashlib
import hmac
import re
import sys
import time

TOLERANCE = 300  # seconds either way, as the SDK's default


def verify(raw_body: bytes, secret: str, msg_id: str, timestamp: str, signature: str, now=None) -> bool:
    """raw_body is the request body exactly as received: never json.loads + json.dumps."""
    if not (msg_id and timestamp and signature):
        return False  # all three headers are required: never fall back to X-Service-Signature
    if not re.fullmatch(r"[0-9]{1,12}", timestamp):
        return False
    if abs((time.time() if now is None else now) - int(timestamp)) > TOLERANCE:
        return False  # too old (a replay?) or too far ahead: check this server's clock
    try:
        key = base64.b64decode(secret.removeprefix("whsec_"), validate=True)
    except binascii.Error:
        return False  # not whsec_ + standard base64: an earlier secret, rotate it
    signed = f"{msg_id}.{timestamp}.".encode() + raw_body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    # One "v1,<base64>" entry per valid secret, space-separated, during a rotation.
    return any(
        hmac.compare_digest(expected, value)
        for version, _, value in (entry.partition(",") for entry in signature.split(" "))
        if version == "v1"
    )


# In Flask: verify(request.get_data(), os.environ["LINKHOOKS_SECRET"], request.headers.get("webhook-id", ""),
#                  request.headers.get("webhook-timestamp", ""), request.headers.get("webhook-signature", ""))
if __name__ == "__main__":
    if len(sys.argv) not in (6, 7):
        sys.exit("usage: python3 verify_standard_webhooks.py <body file> <secret> <webhook-id> <webhook-timestamp> <webhook-signature> [now]")
    body_file, secret, msg_id, timestamp, signature = sys.argv[1:6]
    now = int(sys.argv[6]) if len(sys.argv) > 6 else None
    with open(body_file, "rb") as f:
        valid = verify(f.read(), secret, msg_id, timestamp, signature, now)
    print("valid" if valid else "invalid")
    sys.exit(0 if valid else 1)
