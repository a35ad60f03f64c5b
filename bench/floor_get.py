"""The least possible `get` on mcptask's stack: a Typer app with one command that makes one httpx
request (MCP `tasks/get` with the session header), validates the answer with one pydantic
model and prints it as JSON. `bench/startup.py` times `mcptask get` against this. The answer may
be JSON or an event stream (as server-everything sends every answer).

    python bench/floor_get.py TASK_ID --url URL --session SID
"""

from __future__ import annotations

import json

import httpx
import typer
from pydantic import BaseModel

app = typer.Typer()


class Task(BaseModel):
    taskId: str
    status: str
    statusMessage: str | None = None
    createdAt: str | None = None
    lastUpdatedAt: str | None = None
    ttl: int | None = None
    pollInterval: int | None = None


@app.command()
def get(
    task_id: str,
    url: str = typer.Option(..., "--url"),
    session: str = typer.Option(..., "--session"),
) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"taskId": task_id}}
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
        "Mcp-Session-Id": session,
    }
    response = httpx.post(url, json=message, headers=headers)
    response.raise_for_status()
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        # server-everything answers every request as an event stream: the answer is the data
        # of the event that carries the response
        events = [line[5:].strip() for line in response.text.splitlines() if line[:5] == "data:"]
        answer = next(json.loads(e) for e in events if e and '"result"' in e)
    else:
        answer = response.json()
    task = Task.model_validate(answer["result"])
    print(json.dumps(task.model_dump()))


if __name__ == "__main__":
    app()
