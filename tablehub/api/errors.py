"""One error shape for every refusal of the API:
``{"error": {"code": "...", "message": "...", "fields": {...}}}`` with a 4xx status."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_handler


class BadRequest(exceptions.APIException):
    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "invalid"

    def __init__(self, message: str, fields: dict | None = None, code: str = "invalid"):
        super().__init__(message, code)
        self.message = message
        self.fields = fields or {}
        self.error_code = code


def _first(detail) -> str:
    if isinstance(detail, dict):
        for key, value in detail.items():
            text = _first(value)
            return text if key == "non_field_errors" else f"{key}: {text}"
    if isinstance(detail, list) and detail:
        return _first(detail[0])
    return str(detail)


def _plain(detail):
    if isinstance(detail, dict):
        return {k: _plain(v) for k, v in detail.items()}
    if isinstance(detail, list):
        return [_plain(v) for v in detail]
    return str(detail)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, RecursionError):  # a JSON body nested too deep for the parser
        exc = exceptions.ParseError("JSON parse error - the body is nested too deeply")
    if isinstance(exc, DjangoValidationError):
        fields = exc.message_dict if hasattr(exc, "error_dict") else {"detail": exc.messages}
        exc = BadRequest(_first(fields), fields)
    if isinstance(exc, BadRequest):
        body: dict[str, Any] = {"code": exc.error_code, "message": exc.message}
        if exc.fields:
            body["fields"] = exc.fields
        return Response({"error": body}, status=exc.status_code)
    response = drf_handler(exc, context)
    if response is None:
        return None
    detail = getattr(exc, "detail", str(exc))
    codes = exc.get_codes() if isinstance(exc, exceptions.APIException) else "error"
    code = codes if isinstance(codes, str) else "invalid"
    body = {"code": code, "message": _first(detail)}
    if isinstance(detail, dict):
        body["fields"] = _plain(detail)
    response.data = {"error": body}
    return response
