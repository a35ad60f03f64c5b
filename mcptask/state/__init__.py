"""What mcptask keeps between runs: the task book and the private-file helpers it shares
with auth."""
