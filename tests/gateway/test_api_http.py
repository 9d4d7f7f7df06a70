"""The API's HTTP surface: bearer auth everywhere, OpenAI-style errors, models, the
OpenAPI document, redaction of secrets the model echoes, and start-up refusals."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_api_harness import LoopThread, Running, running_adapter

from herald.config import Secrets
from herald.gateway.platforms.api.adapter import ApiAdapter, create_adapter
from herald.gateway.served.server import AdapterConfigError
from herald.testing.fake_llm import FakeLLMServer, Fault, Reply
from herald.testing.homes import make_home
from herald.testing.strong_secrets import API_KEY

AUTH = {"Authorization": f"Bearer {API_KEY}"}
SERVICE_TOKEN = "zq81-Ke7pLw0-Tmx5Rv2Nd9c"  # no known shape: only the .env value gives it away


@pytest.fixture
def api(tmp_path: Path, fake_llm: FakeLLMServer) -> Iterator[Running]:
    gateway = {
        "api": {
            "enabled": True,
            "port": 0,
            "api_key": "${HERALD_API_KEY}",
            "model_name": "herald-test",
        }
    }
    env = {"HERALD_API_KEY": API_KEY, "BILLING_SERVICE_TOKEN": SERVICE_TOKEN}
    with running_adapter(tmp_path, fake_llm, "api", gateway, env=env) as running:
        yield running


def client_for(api: Running, key: str = API_KEY) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{api.url}/v1", api_key=key, max_retries=0, timeout=30)


def chat(
    api: Running, body: dict[str, Any], headers: dict[str, str] | None = None
) -> httpx.Response:
    return httpx.post(
        f"{api.url}/v1/chat/completions", json=body, headers=headers or AUTH, timeout=30
    )


def test_wrong_key_is_401_and_the_model_is_never_called(
    api: Running, fake_llm: FakeLLMServer
) -> None:
    with pytest.raises(openai.AuthenticationError) as caught:
        client_for(api, key="not-the-key").chat.completions.create(
            model="herald-test", messages=[{"role": "user", "content": "hi"}]
        )
    assert caught.value.status_code == 401
    assert caught.value.code == "invalid_api_key"
    assert fake_llm.model_requests() == [] and api.sink.dispatched == []


@pytest.mark.parametrize(
    "path", ["/v1/models", "/v1/sessions", "/openapi.json", "/v1/no-such-route", "/docs"]
)
def test_every_path_needs_the_bearer_token(api: Running, path: str) -> None:
    response = httpx.get(api.url + path, timeout=10)
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == "Bearer"
    error = response.json()["error"]
    assert error["type"] == "authentication_error" and "Bearer" in error["message"]
    other = httpx.get(api.url + path, headers={"Authorization": "Basic abc"}, timeout=10)
    assert other.status_code == 401


def test_models_lists_the_configured_name(api: Running) -> None:
    models = client_for(api).models.list()
    assert [m.id for m in models.data] == ["herald-test"]
    assert models.data[0].owned_by == "herald"


def test_openapi_document_describes_the_routes(api: Running) -> None:
    document = httpx.get(f"{api.url}/openapi.json", headers=AUTH, timeout=10).json()
    paths = document["paths"]
    assert set(paths) >= {
        "/v1/chat/completions",
        "/v1/models",
        "/v1/sessions",
        "/v1/sessions/{session_id}",
        "/v1/sessions/{session_id}/messages",
    }
    post = paths["/v1/chat/completions"]["post"]
    assert post["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/ChatCompletionRequest"
    )
    content = post["responses"]["200"]["content"]
    assert content["application/json"]["schema"]["$ref"].endswith("/ChatCompletion")
    assert content["text/event-stream"]["schema"]["$ref"].endswith("/ChatCompletionChunk")
    assert post["security"] == [{"HTTPBearer": []}]
    assert "422" not in post["responses"] and "400" in post["responses"]
    schemas = document["components"]["schemas"]
    assert {"ChatCompletionChunk", "SessionDetail", "ErrorBody", "ModelList"} <= set(schemas)
    assert document["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"model": "m"}, "messages"),
        ({"model": "m", "messages": []}, "messages"),
        ({"model": "m", "messages": [{"role": "wizard", "content": "x"}]}, "messages[0].role"),
        ({"model": "m", "messages": [{"role": "system", "content": "x"}]}, "messages"),
        ({"model": "m", "messages": [{"role": "user", "content": "  "}]}, "messages[0].content"),
        (
            {
                "model": "m",
                "messages": [
                    {
                        "role": "user",
                        "content": [{"type": "image_url", "image_url": {"url": "http://x/y.png"}}],
                    }
                ],
            },
            "messages[0].content[0].type",
        ),
        ({"model": "m", "n": 2, "messages": [{"role": "user", "content": "x"}]}, "n"),
        (
            {
                "model": "m",
                "tools": [{"type": "function"}],
                "messages": [{"role": "user", "content": "x"}],
            },
            "tools",
        ),
        ({"model": "m", "user": "", "messages": [{"role": "user", "content": "x"}]}, "user"),
    ],
)
def test_invalid_requests_are_400_naming_the_field(
    api: Running, fake_llm: FakeLLMServer, body: dict[str, Any], param: str
) -> None:
    response = chat(api, body)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == param
    assert fake_llm.model_requests() == []


def test_malformed_json_is_400(api: Running) -> None:
    response = httpx.post(
        f"{api.url}/v1/chat/completions",
        content=b"{not json",
        headers={**AUTH, "Content-Type": "application/json"},
        timeout=10,
    )
    assert response.status_code == 400
    assert "JSON" in response.json()["error"]["message"]


def test_secret_echoed_by_the_model_is_redacted(api: Running, fake_llm: FakeLLMServer) -> None:
    leak = f"The token is {SERVICE_TOKEN} and the key is sk-proj-abc123def456ghi789jkl012mno"
    fake_llm.enqueue(Reply.text(leak), Reply.text(leak, chunk_size=3))
    completion = client_for(api).chat.completions.create(
        model="herald-test", messages=[{"role": "user", "content": "show me"}]
    )
    content = completion.choices[0].message.content or ""
    assert SERVICE_TOKEN not in content and "abc123def456" not in content
    assert content.startswith("The token is [REDACTED]")
    streamed = "".join(
        chunk.choices[0].delta.content or ""
        for chunk in client_for(api).chat.completions.create(
            model="herald-test", messages=[{"role": "user", "content": "again"}], stream=True
        )
        if chunk.choices
    )
    assert streamed == content  # split across 3-character chunks, still masked
    shown = httpx.get(f"{api.url}/v1/sessions", headers=AUTH, timeout=10).json()["data"][0]
    detail = httpx.get(f"{api.url}/v1/sessions/{shown['id']}", headers=AUTH, timeout=10).text
    assert SERVICE_TOKEN not in detail


def test_a_failed_turn_is_an_openai_style_500(api: Running, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(Fault.status(401))  # the provider refuses Herald's key
    with pytest.raises(openai.InternalServerError) as caught:
        client_for(api).chat.completions.create(
            model="herald-test", messages=[{"role": "user", "content": "hi"}]
        )
    assert caught.value.code == "auth_failed"  # the classified reason
    fake_llm.enqueue(Fault.status(401))
    stream = client_for(api).chat.completions.create(
        model="herald-test", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    with pytest.raises(openai.APIError) as in_stream:
        list(stream)  # the error arrives as an SSE `error` event after the opening chunk
    assert in_stream.value.message and in_stream.value.code == "auth_failed"


def test_missing_api_key_refuses_to_start(tmp_path: Path) -> None:
    settings = make_home(tmp_path / "home", {"gateway": {"platforms": {"api": {"enabled": True}}}})
    with pytest.raises(AdapterConfigError, match="never serves without authentication"):
        create_adapter(settings.config, Secrets(settings.home.env_path, environ={}))


def test_inline_key_and_a_taken_port(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = {"gateway": {"platforms": {"api": {"api_key": API_KEY, "port": port}}}}
        settings = make_home(tmp_path / "home", config)
        adapter = create_adapter(settings.config, Secrets(settings.home.env_path, environ={}))
        assert isinstance(adapter, ApiAdapter)
        owner = adapter.keyring.caller_for(API_KEY)
        assert owner is not None and owner.identity == "owner"
        loop = LoopThread()
        try:
            with pytest.raises(OSError, match=f"cannot listen on 127.0.0.1:{port}"):
                loop.run(adapter.connect(object()))  # type: ignore[arg-type]
        finally:
            loop.close()
