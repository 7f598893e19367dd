"""HTTP input for card readers that post instead of keeping a websocket open."""

from __future__ import annotations

from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from croupier.consumers import scan_reply
from tablehub.models import Table


class ShoeCardView(APIView):
    """POST {"seq": 12, "card": "8S", "burn": false} with ``Authorization: Reader <key>``."""

    authentication_classes: list = []
    permission_classes = [AllowAny]

    def post(self, request: Request, table_id: int) -> Response:
        header = request.headers.get("Authorization", "")
        key = header.removeprefix("Reader ").strip() if header.startswith("Reader ") else ""
        table = Table.objects.filter(pk=table_id).first()
        if table is None or not table.check_reader_key(key):
            return Response(
                {"error": {"code": "unauthorized", "message": "unknown reader key"}}, status=401
            )
        if not isinstance(request.data, dict):
            return Response(
                {"error": {"code": "bad_message", "message": "send a JSON object"}}, status=400
            )
        reply = scan_reply(table, request.data)
        return Response(reply, status=200 if reply["ok"] else 400)
