"""A webhook receiver that checks every delivery with the maintained Standard Webhooks library
(PyPI `standardwebhooks`), for tests/integration/events.rs.

Listens on 127.0.0.1 (a free port) and prints `{"port": N}`, then reads the hook's secret
(`whsec_...`) as one line of standard input (the registry makes it when the hook is registered
at that port), then prints one JSON line per POST: its `webhook-id` and `webhook-timestamp`,
whether `Webhook(SECRET).verify` accepted it (`verified`, else `error`), and the body. Answers
204 to a verified delivery and 400 to any other.
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

SECRET = None
# Deliveries arrive concurrently: one line at a time.
PRINTING = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        headers = {k.lower(): v for k, v in self.headers.items()}
        record = {
            "id": headers.get("webhook-id"),
            "timestamp": headers.get("webhook-timestamp"),
            "signature": headers.get("webhook-signature"),
            "body": body.decode("utf-8", "replace"),
        }
        try:
            Webhook(SECRET).verify(body, headers)
            record["verified"] = True
            status = 204
        except WebhookVerificationError as e:
            record["verified"] = False
            record["error"] = str(e)
            status = 400
        with PRINTING:
            sys.stdout.write(json.dumps(record) + "\n")
            sys.stdout.flush()
        self.send_response(status)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(json.dumps({"port": server.server_address[1]}), flush=True)
SECRET = sys.stdin.readline().strip()
server.serve_forever()
