"""A local OpenAI-compatible chat server that misbehaves on purpose, on a free loopback port.

It speaks `POST /v1/chat/completions` as OpenAI's API reference describes it (a JSON reply, or
with `"stream": true` server-sent events of `chat.completion.chunk` objects ending in
`data: [DONE]`), and keeps the raw bytes of every request it received. `mode` decides what it
does: "good" answers with the sentence of the first document in the prompt that is most about the
question (no citation, as small models write), or to a ranking prompt the passage numbers
ordered by the words each shares with the question, "hang" accepts and never answers, "429" and "500" fail (429 with
Retry-After), "drip" streams the good reply (or the next of `script`) one word every `drip` seconds, and
anything else in `script` is replied verbatim."""
from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ChatServer:
    def __init__(self, mode: str = "good", retry_after: float = 1.0):
        self.mode, self.retry_after, self.drip = mode, retry_after, 0.4
        self.requests: list[bytes] = []
        self.script: list[str] = []  # replies used in order before `mode`
        self._release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                server.requests.append(body)
                server._answer(self, json.loads(body or b"{}"))

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self.port = self._http.server_port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> "ChatServer":
        threading.Thread(target=self._http.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._release.set()  # a hanging request ends with the server
        self._http.shutdown()
        self._http.server_close()

    def prompts(self) -> list[str]:
        return [m["content"] for body in self.requests for m in json.loads(body)["messages"]]

    def _reply_text(self, request: dict) -> str:
        if self.script:
            return self.script.pop(0)
        prompt = request["messages"][-1]["content"]
        if '<document number="' in prompt:  # CITEBOT_RERANKER=llm asks for passage numbers
            return ranked_by_the_question(prompt)
        body = re.search(r'<document chunk_id="[^"]+"[^>]*>\n(.*?)\n</document>', prompt, re.S).group(1)
        prose = [line for line in body.splitlines() if line.strip() and not line.lstrip().startswith(("#", "-", "|"))]
        sentences = re.split(r"(?<=[.!?])\s", " ".join(" ".join(prose).split()))
        return about_the_question(sentences, prompt)

    def _answer(self, handler: BaseHTTPRequestHandler, request: dict) -> None:
        mode = "good" if self.script and self.mode != "drip" else self.mode
        if mode == "hang":
            self._release.wait(120)
            return
        if mode in ("429", "500"):
            payload = json.dumps({"error": {"message": "try later", "type": "server_error", "code": mode}}).encode()
            handler.send_response(int(mode))
            if mode == "429":
                handler.send_header("Retry-After", str(self.retry_after))
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(payload)))
            handler.end_headers()
            handler.wfile.write(payload)
            return
        text = self._reply_text(request)
        base = {"id": "chatcmpl-test", "created": int(time.time()), "model": request.get("model", "test")}
        if not request.get("stream"):
            payload = json.dumps({**base, "object": "chat.completion", "choices": [{
                "index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(payload)))
            handler.end_headers()
            handler.wfile.write(payload)
            return
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Connection", "close")
        handler.end_headers()
        pieces = [{"role": "assistant", "content": ""}] + [{"content": t} for t in re.findall(r"\S+\s*", text)]
        for delta in pieces:
            if mode == "drip":  # each piece in time, the whole reply far too slow
                time.sleep(self.drip)
            chunk = {**base, "object": "chat.completion.chunk",
                     "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
            try:
                handler.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            except (BrokenPipeError, ConnectionResetError):
                return  # the client gave up on the reply
        last = {**base, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        handler.wfile.write(f"data: {json.dumps(last)}\n\ndata: [DONE]\n\n".encode())
        handler.wfile.flush()
        handler.close_connection = True


def about_the_question(sentences: list[str], prompt: str) -> str:
    """The sentence sharing the most words with the prompt's question (the first, on a tie): a
    true sentence that answers, as a good writer picks (grounding declines true sentences about
    something else)."""
    question = set(re.findall(r"\w+", re.search(r"^Question: (.*)$", prompt, re.M).group(1).lower()))
    return max(sentences, key=lambda sentence: len(question & set(re.findall(r"\w+", sentence.lower()))))


def ranked_by_the_question(prompt: str) -> str:
    """"2, 1, 3": the numbered passages of a ranking prompt, most words shared with its question
    first (the lower number on a tie), as a model that follows the prompt replies."""
    question = set(re.findall(r"\w+", re.search(r"^Question: (.*)$", prompt, re.M).group(1).lower()))
    passages = re.findall(r'<document number="(\d+)"[^>]*>\n(.*?)\n</document>', prompt, re.S)
    order = sorted(passages, key=lambda p: (-len(question & set(re.findall(r"\w+", p[1].lower()))), int(p[0])))
    return ", ".join(number for number, _ in order)
