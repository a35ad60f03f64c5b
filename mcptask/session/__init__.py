"""The session a command runs in: the Context, the endpoint it builds, targets, config, the
terminal.
"""
