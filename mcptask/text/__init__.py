"""Text handling: sanitising server text, redacting secrets, URLs without credentials, command
lines.
"""
