# Verifying a linkhooks delivery in Python (standard library only).
# Usage: python3 verify.py <body file> <secret> <X-Service-Signature value>
import hashlib
import hmac
import re
import sys


def verify(raw_body: bytes, secret: str, signature: str) -> bool:
    """raw_body is the request body exactly as received: never json.loads + json.dumps."""
    if not re.fullmatch(r"[0-9a-fA-F]{64}", signature or ""):
        return False  # linkhooks signatures are 64 hex digits, no "sha256=" prefix
    expected = hmac.new(secret.encode("utf-8"), raw_body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature.lower())


# In Flask: verify(request.get_data(), os.environ["LINKHOOKS_SECRET"],
#                  request.headers.get("X-Service-Signature", ""))
if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: python3 verify.py <body file> <secret> <X-Service-Signature value>")
    body_file, secret, signature = sys.argv[1:4]
    with open(body_file, "rb") as f:
        valid = verify(f.read(), secret, signature)
    print("valid" if valid else "invalid")
    sys.exit(0 if valid else 1)
