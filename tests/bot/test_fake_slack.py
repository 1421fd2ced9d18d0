"""Tests of the Slack Web API fake itself, driven through the real slack_sdk client."""
import json
import time
from urllib.parse import parse_qs

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.signature import SignatureVerifier

# tests/conftest.py puts tests/ on sys.path: the shared fakes import from any sub-folder.
from fake_slack import FakeSlack, action_body, command_body, event_body, signed_headers

SECRET = "test-signing-secret"


@pytest.fixture
def fake():
    with FakeSlack() as f:
        yield f


@pytest.fixture
def client(fake):
    return WebClient(base_url=fake.url, token="xoxb-test")


def test_auth_test_identity_and_bearer_header(fake, client):
    resp = client.auth_test()
    assert (resp["user_id"], resp["bot_id"], resp["team_id"], resp["user"]) == ("UBOT", "BBOT", "T0001", "citebot")
    assert fake.calls("auth.test")[0].headers["authorization"] == "Bearer xoxb-test"


def test_post_message_in_thread_shows_up_in_replies(fake, client):
    fake.add_message("C1", "1700000001.000001", "<@UBOT> what is the leave policy?", user="U1")
    resp = client.chat_postMessage(channel="C1", thread_ts="1700000001.000001", text="Thinking…")
    assert resp["ok"] and resp["channel"] == "C1"
    assert resp["message"]["user"] == "UBOT" and resp["message"]["thread_ts"] == "1700000001.000001"
    assert float(resp["ts"]) > 1700000001.000001  # bot ts is always after seeded history

    second = client.chat_postMessage(channel="C1", thread_ts="1700000001.000001", text="more")
    assert float(second["ts"]) > float(resp["ts"])

    msgs = client.conversations_replies(channel="C1", ts="1700000001.000001")
    assert [m["text"] for m in msgs["messages"]] == ["<@UBOT> what is the leave policy?", "Thinking…", "more"]
    assert msgs["messages"][0]["reply_count"] == 2 and msgs["has_more"] is False
    # Recorded args are what slack_sdk actually sent (JSON body for postMessage).
    assert fake.calls("chat.postMessage")[0].args["text"] == "Thinking…"


def test_update_changes_text_in_thread(fake, client):
    fake.add_message("C1", "1700000001.000001", "question", user="U1")
    posted = client.chat_postMessage(channel="C1", thread_ts="1700000001.000001", text="Thinking…")
    upd = client.chat_update(channel="C1", ts=posted["ts"], text="Final answer [1]")
    assert (upd["ts"], upd["text"]) == (posted["ts"], "Final answer [1]")
    replies = fake.thread("C1", "1700000001.000001")
    assert replies[-1]["text"] == "Final answer [1]" and "edited" in replies[-1]
    with pytest.raises(SlackApiError) as err:
        client.chat_update(channel="C1", ts="1.000000", text="x")
    assert err.value.response["error"] == "message_not_found"


def test_fail_next_ratelimited_then_recovers(fake, client):
    fake.fail_next("chat.postMessage", error="ratelimited", status=429, retry_after=3)
    with pytest.raises(SlackApiError) as err:
        client.chat_postMessage(channel="C1", text="hi")
    assert err.value.response.status_code == 429
    assert err.value.response["error"] == "ratelimited"
    assert err.value.response.headers["Retry-After"] == "3"
    assert client.chat_postMessage(channel="C1", text="hi")["ok"]  # only the next call fails
    assert len(fake.calls("chat.postMessage")) == 2


def test_fail_next_server_error_count(fake, client):
    fake.fail_next("reactions.add", error="internal_error", status=500, retry_after=None, count=2)
    for _ in range(2):
        with pytest.raises(SlackApiError) as err:
            client.reactions_add(channel="C1", timestamp="1.000000", name="eyes")
        assert err.value.response.status_code == 500
        assert "Retry-After" not in err.value.response.headers
    assert client.reactions_add(channel="C1", timestamp="1.000000", name="eyes")["ok"]


def test_users_info_admin_flag_and_misc_methods(fake, client):
    fake.users["UADMIN"]["is_admin"] = True
    assert client.users_info(user="UADMIN")["user"]["is_admin"] is True
    assert client.users_info(user="U2")["user"]["is_admin"] is False
    assert client.chat_postEphemeral(channel="C1", user="U2", text="only you")["message_ts"]
    view = client.views_open(trigger_id="t1", view={"type": "modal", "title": {"type": "plain_text", "text": "x"}})
    assert view["view"]["type"] == "modal" and view["view"]["id"].startswith("V")
    assert client.api_call("bookmarks.list")["ok"]  # unknown methods succeed
    with pytest.raises(SlackApiError):
        WebClient(base_url=fake.url).chat_postMessage(channel="C1", text="no token")


def test_wait_for_blocks_and_reports_calls(fake, client):
    import threading

    threading.Timer(0.2, lambda: client.chat_postMessage(channel="C9", text="late")).start()
    (call,) = fake.wait_for("chat.postMessage", timeout=5, predicate=lambda c: c.args["channel"] == "C9")
    assert call.args["text"] == "late"
    with pytest.raises(AssertionError, match="chat.postMessage"):
        fake.wait_for("chat.update", timeout=0.2)


def test_response_url_posts_are_recorded(fake):
    from slack_sdk.webhook import WebhookClient

    url = fake.response_url("reload")
    assert WebhookClient(url).send(text="Reloaded 12 documents").status_code == 200
    (call,) = fake.wait_for("response_url")
    assert call.path == "/response/reload" and call.args["text"] == "Reloaded 12 documents"


def test_signed_headers_verify_with_slack_sdk():
    body = event_body({"type": "app_mention", "user": "U1", "text": "<@UBOT> hi", "ts": "1.000001", "channel": "C1"})
    headers = signed_headers(SECRET, body)
    verifier = SignatureVerifier(SECRET)
    assert verifier.is_valid_request(body, headers)
    assert not SignatureVerifier("wrong").is_valid_request(body, headers)
    assert headers["Content-Type"] == "application/json"
    old = signed_headers(SECRET, body, timestamp=int(time.time()) - 3600)
    assert not verifier.is_valid_request(body, old)  # stale timestamps are rejected

    envelope = json.loads(body)
    assert envelope["authorizations"][0]["user_id"] == "UBOT" and envelope["type"] == "event_callback"
    assert envelope["event_id"] != json.loads(event_body({}))["event_id"]

    cmd = command_body(response_url="http://x/response/r")
    assert parse_qs(cmd)["command"] == ["/citebot"] and parse_qs(cmd)["text"] == ["reload"]
    assert signed_headers(SECRET, cmd)["Content-Type"] == "application/x-www-form-urlencoded"
    payload = json.loads(parse_qs(action_body({"actions": [{"action_id": "a"}]}))["payload"][0])
    assert payload["type"] == "block_actions" and payload["actions"][0]["action_id"] == "a"


def test_bolt_app_end_to_end(fake):
    """A signed app_mention and slash command flow through a real bolt App into the fake."""
    from slack_bolt import App
    from slack_bolt.request import BoltRequest

    app = App(signing_secret=SECRET, client=WebClient(base_url=fake.url, token="xoxb-test"))

    @app.event("app_mention")
    def on_mention(event, say, context):
        assert context.bot_user_id == "UBOT"
        say(text="answer", thread_ts=event["ts"])

    @app.command("/citebot")
    def on_cmd(ack, respond, command):
        ack()
        respond(text=f"did {command['text']}")

    fake.add_message("C1", "1700000005.000001", "<@UBOT> q", user="U1")
    body = event_body({"type": "app_mention", "user": "U1", "text": "<@UBOT> q",
                       "ts": "1700000005.000001", "channel": "C1"})
    assert app.dispatch(BoltRequest(body=body, headers=signed_headers(SECRET, body))).status == 200
    fake.wait_for("chat.postMessage")
    assert [m["text"] for m in fake.thread("C1", "1700000005.000001")] == ["<@UBOT> q", "answer"]

    body = command_body(response_url=fake.response_url("cmd"))
    assert app.dispatch(BoltRequest(body=body, headers=signed_headers(SECRET, body))).status == 200
    assert fake.wait_for("response_url")[0].args["text"] == "did reload"

    bad = app.dispatch(BoltRequest(body=body, headers=signed_headers("nope", body)))
    assert bad.status == 401


def test_thread_status_is_set_cleared_by_a_reply_and_can_be_refused(fake, client):
    fake.add_message("C1", "1700000001.000001", "<@UBOT> hi?", user="U1")
    client.assistant_threads_setStatus(channel_id="C1", thread_ts="1700000001.000001", status="is thinking…",
                                       loading_messages=["Reading…"])
    assert fake.statuses == {("C1", "1700000001.000001"): "is thinking…"}
    client.chat_postMessage(channel="C1", thread_ts="1700000001.000001", text="answer")
    assert fake.statuses == {}  # Slack ends the status when the app replies
    fake.fail_next("assistant.threads.setStatus", error="missing_scope", status=200, retry_after=None)
    with pytest.raises(SlackApiError) as refused:
        client.assistant_threads_setStatus(channel_id="C1", thread_ts="1700000001.000001", status="x")
    assert refused.value.response["error"] == "missing_scope"


def test_suggested_prompts_take_one_to_four_prompts_with_title_and_message(fake, client):
    prompt = {"title": "Leave", "message": "How much leave do I get?"}
    client.assistant_threads_setSuggestedPrompts(channel_id="D1", thread_ts="1.000001", prompts=[prompt], title="Try")
    assert fake.suggested_prompts[("D1", "1.000001")] == {"title": "Try", "prompts": [prompt]}
    for bad in ([], [prompt] * 5, [{"title": "no message"}]):
        with pytest.raises(SlackApiError):
            client.assistant_threads_setSuggestedPrompts(channel_id="D1", thread_ts="1.000001", prompts=bad)


def test_a_stream_builds_one_threaded_message_and_refuses_appends_once_stopped(fake, client):
    fake.add_message("C1", "1700000001.000001", "<@UBOT> q?", user="U1")
    with pytest.raises(SlackApiError):  # a channel stream must name its recipient
        client.chat_startStream(channel="C1", thread_ts="1700000001.000001", markdown_text="x")
    fake.clear_calls()
    stream = client.chat_stream(channel="C1", thread_ts="1700000001.000001", recipient_user_id="U1",
                                recipient_team_id="T0001", buffer_size=1)
    stream.append(markdown_text="Up to 3 days")
    stream.append(markdown_text=" a week.")
    stream.stop(blocks=[{"type": "context", "elements": [{"type": "mrkdwn", "text": "*Sources*"}]}])
    [reply] = [m for m in fake.thread("C1", "1700000001.000001") if m.get("bot_id")]
    assert reply["text"] == "Up to 3 days a week." and reply["blocks"][0]["type"] == "context"
    assert [c.method for c in fake.calls() if "Stream" in c.method] == [
        "chat.startStream", "chat.appendStream", "chat.stopStream"]
    with pytest.raises(SlackApiError) as late:
        client.chat_appendStream(channel="C1", ts=stream.ts, markdown_text="more")
    assert late.value.response["error"] == "message_not_in_streaming_state"
