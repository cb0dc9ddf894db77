"""A scripted HTTP server on 127.0.0.1 for the client's tests (stdlib only):
it answers each request with the next of its scripted answers (the last one
repeats), after that answer's delay, and records what it saw."""
import http.server
import json
import socket
import threading
import time


class Stub:
    """Stub(answers): answers is a list of (status, headers dict, body
    object or a function of the request's, delay seconds); with
    close_after_answer, each connection is closed after one answer without
    a `Connection: close` (as a server's idle timeout does). .url, .requests [(path, body dict, monotonic
    time)], .headers (each request's, in the same order), .connections, .max_concurrent; stop() at the
    end."""

    def __init__(self, answers, port=0, close_after_answer=False):
        self.answers = list(answers)
        self.close_after_answer = close_after_answer
        self.requests, self.headers, self.connections = [], [], 0
        self.concurrent = self.max_concurrent = 0
        self.lock = threading.Lock()
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self):
                super().setup()
                # Headers and body are two writes: no Nagle wait between them.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                with stub.lock:
                    stub.connections += 1

            def log_message(self, *args):
                pass

            def do_GET(self):
                self.answer(None)

            def do_DELETE(self):
                self.answer(None)

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                self.answer(json.loads(self.rfile.read(n) or b"null"))

            def answer(self, body):
                with stub.lock:
                    stub.requests.append((self.path, body, time.monotonic()))
                    stub.headers.append(dict(self.headers.items()))
                    i = len(stub.requests) - 1
                    status, headers, reply, delay = stub.answers[min(i, len(stub.answers) - 1)]
                    stub.concurrent += 1
                    stub.max_concurrent = max(stub.max_concurrent, stub.concurrent)
                time.sleep(delay)
                with stub.lock:
                    stub.concurrent -= 1
                data = json.dumps(reply(body) if callable(reply) else reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
                if stub.close_after_answer:
                    self.close_connection = True

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = "http://127.0.0.1:%d" % self.port
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def ok(reply=None, delay=0.0):
    return (200, {}, {"status": "pass"} if reply is None else reply, delay)


def error(status, message="nope", field=None, headers=None, delay=0.0):
    return (status, headers or {}, {"error": message, "field": field}, delay)
