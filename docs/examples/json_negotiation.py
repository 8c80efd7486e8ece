#!/usr/bin/env python3
"""A broker that talks JSON only: negotiate a deadline job with wsag-server, accept it,
wait until it is Complete and read its usage record. Python's standard library only.

    python3 docs/examples/json_negotiation.py http://localhost:8080

docs/api.md describes the routes; GET /api/openapi.json is their OpenAPI document.
"""
import json
import sys
import time
import urllib.error
import urllib.request
import uuid

BASE = sys.argv[1].rstrip("/") if len(sys.argv) > 1 else "http://localhost:8080"


def call(method, path, body=None, headers=None):
    """One request; a refusal (an RFC 9457 problem document) is raised with its fault and detail."""
    data = None if body is None else json.dumps(body).encode()
    sent = {"content-type": "application/json"} if body is not None else {"x-requested-with": "python"}
    request = urllib.request.Request(BASE + path, data=data, method=method, headers={**sent, **(headers or {})})
    try:
        with urllib.request.urlopen(request) as response:
            text = response.read().decode()
            kind = response.headers.get("content-type", "")
            return json.loads(text) if "json" in kind and text else text
    except urllib.error.HTTPError as error:
        problem = json.loads(error.read().decode())
        raise SystemExit(f"{method} {path}: {problem['title']}: {problem['detail']}")


templates = call("GET", "/api/templates")["templates"]
template = next(t for t in templates if t["name"] == "deadline-job")
print("template", template["name"], "items:", ", ".join(i["name"] for i in template["items"] if i["settable"]))

items = {"NodeCount": 2, "RuntimeEstimate": 60, "GuaranteeLevel": "Legacy"}
negotiation = call("POST", "/api/negotiations", {})
print("negotiation", negotiation["id"], negotiation["state"])

advice = call("POST", f"/api/negotiations/{negotiation['id']}/offers",
              {"offers": [{"template": "deadline-job", "items": items, "state": "Advisory"}]})
for offer in advice["counterOffers"]:
    print("advisory", offer["state"], offer.get("note", ""))

answers = call("POST", f"/api/negotiations/{negotiation['id']}/offers",
               {"offers": [{"template": "deadline-job", "items": items, "state": "Solicited"}]})
for answer in answers["counterOffers"]:
    print("solicited", answer["state"], answer.get("note", ""))
offer = next(o for o in answers["counterOffers"] if o["state"] == "Acceptable")
price, hold = offer["price"], offer["hold"]
print(f"acceptable {offer['offerId']}: {price['amount']} {price['currency']}, "
      f"{hold['nodes']} nodes held until {hold['expiresAt']}")

# The key makes the accept safe to send again if its answer is lost.
agreement = call("POST", f"/api/negotiations/{negotiation['id']}/offers/{offer['offerId']}/accept",
                 headers={"idempotency-key": str(uuid.uuid4())})
print("agreement", agreement["id"], agreement["state"], "document:", agreement["links"]["document"])

for _ in range(6000):  # the job runs its RuntimeEstimate (60 s) after its nodes are prepared
    agreement = call("GET", f"/api/agreements/{agreement['id']}")
    if agreement["state"] in ("Complete", "Terminated"):
        break
    time.sleep(0.1)
print("agreement", agreement["id"], agreement["state"],
      "guarantees:", ", ".join(f"{g['termName']} {g['state']}" for g in agreement["guaranteeTerms"]))

record = call("GET", f"/api/usage/{agreement['id']}")
print("usage record:", record.splitlines()[0][:60] if record else "none")
