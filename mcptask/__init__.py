"""mcptask: inspect long-running tasks on MCP servers and A2A agents."""

__version__ = "0.1.0"
