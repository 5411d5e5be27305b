#!/usr/bin/env python3
"""llm_server.py - a loopback chat server that replays recorded replies.

Started by the unit tests (tests/unit/test_llm_client.c, test_llm_anthropic.c): it binds 127.0.0.1
on an ephemeral port, prints "PORT <n>" on stdout, then answers each POST to /v1/chat/completions
(OpenAI's chat completions) or /v1/messages (Anthropic's Messages API) with the next fixture named
on the command line, in order. It exits by itself once every fixture was served
(after a short grace for the client to read the last one), or after --lifetime seconds, whichever
comes first.

A fixture is tests/fixtures/llm/<name>.json:
  status         HTTP status (200)
  headers        extra response headers ({"Retry-After": "0"})
  delay_ms       sleep before answering (a slow server)
  raw            the body verbatim (malformed replies, error pages), or
  body           a JSON body verbatim, or
  content_file   a .txt beside the fixture: the assistant's content, wrapped in a chat completion
                 (on /v1/messages: in a message, one text block)
  finish_reason  for content_file ("stop"; on /v1/messages the stop_reason, "end_turn")
  usage          for content_file: {"prompt_tokens": .., "completion_tokens": ..}; null omits it
                 (on /v1/messages sent as input_tokens, output_tokens)
  refuse_system  {"status": .., "raw": ..}: the answer to a request that has a "system" message,
                 as a chat template that refuses the system role gives it; the fixture stays
                 next in line, so a request without one gets it
"{{AUTH}}" in raw or content is replaced by the request's Authorization header, or its x-api-key
header when it has no Authorization (to test that the client redacts an echoed key). Every request
(GET too) is appended to --log as one JSON line, with both headers and anthropic-version.
GET /v1/models lists the --models names (comma-separated); without --models it is a 404.
"""
import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--lifetime", type=float, default=30.0)
    ap.add_argument("--models", default=None)
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()

    queue = []
    for name in args.names:
        with open(os.path.join(args.fixtures, name + ".json"), encoding="utf-8") as f:
            fx = json.load(f)
        if "content_file" in fx:
            with open(os.path.join(args.fixtures, fx["content_file"]), encoding="utf-8") as f:
                fx["content"] = f.read()
        queue.append(fx)

    lock = threading.Lock()
    state = {"next": 0}
    done = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *a):
            pass

        def reply(self, status, body, headers=None):
            data = body.encode("utf-8")
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

        def do_POST(self):
            n = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(n).decode("utf-8", "replace")
            auth = self.headers.get("Authorization", "") or self.headers.get("x-api-key", "")
            anthropic = self.path == "/v1/messages"
            try:
                req = json.loads(raw)
            except ValueError:
                req = raw
            with lock:
                i = state["next"]
                fx = queue[i] if i < len(queue) else None
                refusal = None
                if fx is not None and fx.get("refuse_system") and isinstance(req, dict) and any(
                        isinstance(m, dict) and m.get("role") == "system"
                        for m in req.get("messages", [])):
                    refusal = fx["refuse_system"]  # the fixture stays next in line
                else:
                    state["next"] += 1
                with open(args.log, "a", encoding="utf-8") as f:
                    f.write(json.dumps({
                        "path": self.path,
                        "authorization": self.headers.get("Authorization", ""),
                        "x_api_key": self.headers.get("x-api-key", ""),
                        "anthropic_version": self.headers.get("anthropic-version", ""),
                        "request": req}) + "\n")
            if refusal is not None:
                self.reply(refusal.get("status", 500), refusal.get("raw", ""))
            elif self.path not in ("/v1/chat/completions", "/v1/messages"):
                self.reply(404, json.dumps({"error": "no route " + self.path}))
            elif i >= len(queue):
                self.reply(410, json.dumps({"error": "llm_server: no more fixtures"}))
            else:
                fx = queue[i]
                if fx.get("delay_ms"):
                    time.sleep(fx["delay_ms"] / 1000.0)
                if "raw" in fx:
                    body = fx["raw"].replace("{{AUTH}}", auth)
                elif "body" in fx:
                    body = json.dumps(fx["body"])
                elif anthropic:
                    msg = {
                        "id": "msg_fixture_%d" % i,
                        "type": "message",
                        "role": "assistant",
                        "model": req.get("model", "") if isinstance(req, dict) else "",
                        "content": [{"type": "text",
                                     "text": fx.get("content", "").replace("{{AUTH}}", auth)}],
                        "stop_reason": fx.get("finish_reason", "end_turn"),
                        "stop_sequence": None,
                    }
                    usage = fx.get("usage", {"prompt_tokens": 100, "completion_tokens": 50})
                    if usage is not None:
                        msg["usage"] = {"input_tokens": usage["prompt_tokens"],
                                        "output_tokens": usage["completion_tokens"]}
                    body = json.dumps(msg)
                else:
                    comp = {
                        "id": "chatcmpl-fixture-%d" % i,
                        "object": "chat.completion",
                        "created": 0,
                        "model": req.get("model", "") if isinstance(req, dict) else "",
                        "choices": [{
                            "index": 0,
                            "message": {"role": "assistant",
                                        "content": fx.get("content", "").replace("{{AUTH}}",
                                                                                 auth)},
                            "finish_reason": fx.get("finish_reason", "stop"),
                        }],
                    }
                    usage = fx.get("usage", {"prompt_tokens": 100, "completion_tokens": 50})
                    if usage is not None:
                        usage = dict(usage)
                        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
                        comp["usage"] = usage
                    body = json.dumps(comp)
                self.reply(fx.get("status", 200), body, fx.get("headers"))
            with lock:
                if state["next"] >= len(queue):
                    done.set()

        def do_GET(self):
            with lock:
                with open(args.log, "a", encoding="utf-8") as f:
                    f.write(json.dumps({"path": self.path, "method": "GET",
                                        "authorization": self.headers.get("Authorization", ""),
                                        "x_api_key": self.headers.get("x-api-key", "")})
                            + "\n")
            if self.path == "/v1/models" and args.models is not None:
                data = [{"id": m, "object": "model", "owned_by": "llm_server"}
                        for m in args.models.split(",") if m]
                self.reply(200, json.dumps({"object": "list", "data": data}))
            else:
                self.reply(404, json.dumps({"error": "POST /v1/chat/completions or /v1/messages"}))

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    print("PORT %d" % srv.server_address[1], flush=True)
    if not queue:
        done.set()
    deadline = time.monotonic() + args.lifetime
    while not done.is_set() and time.monotonic() < deadline:
        done.wait(0.05)
    # grace: a client may still be reading the last answer or retrying once more
    time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
    srv.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
