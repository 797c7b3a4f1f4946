"""The App's webhook deliveries as the fake GitHub makes and logs them: `send` POSTs a signed
delivery to the App's webhook URL (`target`) as GitHub does and records the attempt (status
code 0 and `failed to connect` when nothing answers, as GitHub's delivery log shows), for
`GET /app/hook/deliveries` and its redelivery, `POST /app/hook/deliveries/{id}/attempts`.

GitHub's log lists an attempt once it has ended, with the answer's status code and duration; an
attempt still waiting for its answer is not in it (listed as a failure, it would be redelivered
while the first attempt is still going to succeed)."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx

from tests.kit.loopback import TLS


@dataclass
class HookDelivery:
    id: int
    guid: str
    event: str
    action: str | None
    payload: bytes
    installation_id: int | None
    repository_id: int | None
    redelivery: bool
    delivered_at: datetime
    status_code: int = 0
    status: str = "failed to connect"
    duration: float = 0.0
    ended: bool = False  # the attempt has its answer (or gave up): GitHub's log lists it

    def item(self) -> dict[str, Any]:
        return {"id": self.id, "guid": self.guid, "event": self.event, "action": self.action,
                "delivered_at": self.delivered_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "redelivery": self.redelivery, "duration": self.duration,
                "status": self.status, "status_code": self.status_code,
                "installation_id": self.installation_id, "repository_id": self.repository_id,
                "throttled_at": None}


@dataclass
class HookLog:
    target: str | None = None  # the App's webhook URL
    secret: str = ""
    deliveries: list[HookDelivery] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def send(self, event: str, payload: dict[str, Any] | bytes, *, guid: str | None = None,
             redelivery: bool = False) -> HookDelivery:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        doc = json.loads(body)
        with self.lock:
            delivery = HookDelivery(
                id=len(self.deliveries) + 1, guid=guid or str(uuid.uuid4()), event=event,
                action=doc.get("action"), payload=body,
                installation_id=(doc.get("installation") or {}).get("id"),
                repository_id=(doc.get("repository") or {}).get("id"),
                redelivery=redelivery, delivered_at=datetime.now(UTC))
            self.deliveries.append(delivery)
        signature = "sha256=" + hmac.new(self.secret.encode(), body, hashlib.sha256).hexdigest()
        started = time.monotonic()
        try:
            answer = httpx.post(f"{self.target}/webhooks/github", content=body, timeout=10,
                                trust_env=False, verify=TLS, headers={
                                    "X-GitHub-Event": event, "X-GitHub-Delivery": delivery.guid,
                                    "X-Hub-Signature-256": signature,
                                    "Content-Type": "application/json"})
            delivery.status_code, delivery.status = answer.status_code, answer.reason_phrase
        except httpx.HTTPError:
            delivery.status_code, delivery.status = 0, "failed to connect"
        delivery.duration = round(time.monotonic() - started, 3)
        delivery.ended = True
        return delivery

    def redeliver(self, delivery_id: int) -> bool:
        """Send a logged delivery again (in the background, as GitHub answers 202 first)."""
        found = next((d for d in self.deliveries if d.id == delivery_id), None)
        if found is None:
            return False
        threading.Thread(target=self.send, args=(found.event, found.payload),
                         kwargs={"guid": found.guid, "redelivery": True}, daemon=True).start()
        return True
