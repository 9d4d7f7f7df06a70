"""The OpenAPI document: FastAPI's own, plus what it cannot infer — the streamed
(`text/event-stream`) form of chat completions and its chunk schema — and minus
FastAPI's 422 validation response, which this API answers as a 400."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic.json_schema import models_json_schema

from herald.gateway.platforms.api.models import ChatCompletionChunk

if TYPE_CHECKING:
    from fastapi import FastAPI

_REF = "#/components/schemas/{model}"


def install_openapi(app: FastAPI) -> None:
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        document = build()
        _, extra = models_json_schema([(ChatCompletionChunk, "serialization")], ref_template=_REF)
        schemas = document.setdefault("components", {}).setdefault("schemas", {})
        for name, schema in extra.get("$defs", {}).items():
            schemas.setdefault(name, schema)
        operation = document["paths"]["/v1/chat/completions"]["post"]
        content = operation["responses"]["200"].setdefault("content", {})
        content["text/event-stream"] = {
            "schema": {"$ref": _REF.format(model="ChatCompletionChunk")},
            "description": "with `stream: true`: one chunk per `data:` line, then `data: [DONE]`",
        }
        # Validation errors are answered as OpenAI-style 400s, not FastAPI's 422.
        for path in document["paths"].values():
            for op in path.values():
                op.get("responses", {}).pop("422", None)
        for name in ("HTTPValidationError", "ValidationError"):
            schemas.pop(name, None)
        app.openapi_schema = document
        return document

    app.openapi = openapi  # type: ignore[method-assign]
