"""The hostile repository's attempt to leak secrets through its output (tools/attacks.py in the
repository, assembled in hostile.py): a token printed bare, in a clone URL, in an Authorization
header, and a PEM private key block; the output tails kept in the record must show none."""

LEAKS = r'''def token(stage):
    secret = TARGETS["token"]
    report(stage, "token", secret)
    report(stage, "url", f"https://x-access-token:{secret}@github.com/octo/hostile.git")
    report(stage, "header", f"Authorization: Bearer {secret}")
    print("-----BEGIN RSA PRIVATE KEY-----\n" + TARGETS["pem_body"]
          + "\n-----END RSA PRIVATE KEY-----", flush=True)'''
