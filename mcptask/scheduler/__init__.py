"""The polling scheduler: pure logic with an injected clock, sleep and fetchers."""
