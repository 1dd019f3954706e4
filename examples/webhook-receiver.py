# A webhook receiver (docs/WEBHOOKS.md): checks each delivery with the standardwebhooks package
# (pip install standardwebhooks) and prints it. WEBHOOK_SECRET=whsec_... python3 webhook-receiver.py
import os
from http.server import BaseHTTPRequestHandler, HTTPServer
from standardwebhooks.webhooks import Webhook

hook = Webhook(os.environ["WEBHOOK_SECRET"])

class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["content-length"]))
        try:
            message = hook.verify(body, dict(self.headers))
        except Exception as e:  # a forged or altered delivery
            print("refused:", e, flush=True)
            self.send_response(400)
        else:
            print(message["type"], message["data"].get("id"), flush=True)
            self.send_response(204)
        self.end_headers()

HTTPServer(("127.0.0.1", int(os.environ.get("PORT", "8099"))), Receiver).serve_forever()
