from mcptask.cli import run

run()
