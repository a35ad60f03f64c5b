"""What the a2a-sdk test agent (`a2a_server.py`) produces for `report...`: shared by the agent
and the tests that check what mcptask made of it."""

#: the chunks of the text artifact `report.md` (id `report`), in order
REPORT_CHUNKS = ["# Report\n", "first finding\n", "second finding\n", "the end\n"]
#: the bytes of the file artifact `data.bin` (id `data`): every byte value, 16 times (4 KiB)
REPORT_FILE = bytes(range(256)) * 16
