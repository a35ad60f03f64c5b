"""A task's push notification config, as the agent shows it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class PushConfig:
    """A push notification config as the agent shows it (A2A `TaskPushNotificationConfig`):
    where it POSTs the task's updates, and what it sends with them. Secrets never leave it:
    its JSON view (`commands.push._config_json`, where the URL loses its password) says
    whether a token or credentials are set, not what they are."""

    task_id: str
    id: str | None
    url: str
    token: str | None = None
    auth_scheme: str | None = None
    credentials: str | None = None
