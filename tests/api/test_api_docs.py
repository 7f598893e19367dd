"""The API's documentation (issue 19, point 9): Swagger UI and ReDoc served from the app's own
static files (drf-spectacular-sidecar, no CDN), and a schema that validates with no warning."""

import re

import pytest
from django.contrib.staticfiles import finders
from django.core.management import call_command

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/api/docs/", "/api/redoc/"])
def test_the_api_documentation_is_served_without_a_cdn(client, path):
    response = client.get(path)
    assert response.status_code == 200
    page = response.content.decode()
    assert "/api/schema/" in page
    scripts = re.findall(r'src="([^"]+)"', page)
    assert scripts and all(src.startswith("/static/") for src in scripts), scripts
    for src in scripts:  # each file is really there to be served
        assert finders.find(src.removeprefix("/static/")), src
    assert "cdn" not in page.lower() and "//unpkg" not in page


def test_the_schema_validates_with_no_warning(tmp_path):
    out = tmp_path / "schema.yaml"
    # fails with SchemaGenerationError on any warning or error (the shoe's card view had one)
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    assert "/api/tables/{table_id}/shoe/cards/" in out.read_text()
