"""The pure readings of scenarios/server/elicitation.py: what counts as a field for a secret, a URL
in a form, a valid URL, a development host, user data in a URL, and the invalid content the
validation probe sends.  Each accepts what the spec allows (a name, an email address, a username,
https on any host, http on a development one), not only what the broken servers send."""

from __future__ import annotations

import pytest

from conformance.scenarios.server.elicitation import (
    MARK,
    MARK_TEXT,
    development_host,
    invalid_content,
    sensitive_fields,
    url_problem,
    urls_in_form,
    user_data_in_url,
)


def _form(**props: dict) -> dict:
    return {"type": "object", "properties": props}


@pytest.mark.parametrize("name, sub", [
    ("password", {"type": "string"}),
    ("accountPassword", {"type": "string"}),
    ("key", {"type": "string", "title": "API Key"}),
    ("openai_api_key", {"type": "string"}),
    ("token", {"type": "string", "description": "Your GitHub access token"}),
    ("cc", {"type": "string", "title": "Credit card number"}),
    ("cvv", {"type": "string"}),
    ("clientSecret", {"type": "string"}),
    ("passphrase", {"type": "string"}),
])
def test_a_field_for_a_secret_is_sensitive(name: str, sub: dict) -> None:
    assert sensitive_fields(_form(**{name: sub})) == [name]


@pytest.mark.parametrize("name, sub", [
    ("name", {"type": "string", "description": "Your full name"}),
    ("email", {"type": "string", "format": "email"}),
    ("username", {"type": "string", "title": "GitHub username"}),
    ("token_count", {"type": "integer", "description": "How many tokens to generate"}),
    ("keyboard", {"type": "string", "enum": ["qwerty", "azerty"]}),
    ("passport_country", {"type": "string"}),
    ("confirm", {"type": "boolean"}),
])
def test_contact_and_profile_fields_are_not_sensitive(name: str, sub: dict) -> None:
    # "General contact or profile information (such as a name, email address, or username) is not
    # categorically prohibited"
    assert sensitive_fields(_form(**{name: sub})) == []


def test_urls_in_a_form_are_found_in_every_text_field_and_nowhere_else() -> None:
    params = {
        "message": "Please see https://example.com/help first",
        "requestedSchema": _form(
            color={"type": "string", "oneOf": [{"const": "r", "title": "Red (www.example.org/red)"}]},
            site={"type": "string", "format": "uri", "default": "http://example.net/"},
            plain={"type": "string", "description": "no link here"},
        ),
    }
    assert urls_in_form(params) == ["https://example.com/help", "www.example.org/red", "http://example.net/"]
    assert urls_in_form({"message": "Your name?", "requestedSchema": _form(name={"type": "string"})}) == []


@pytest.mark.parametrize("url", [
    "https://mcp.example.com/ui/set_api_key",
    "https://example.com/connect?elicitationId=550e8400-e29b-41d4-a716-446655440000",
    "http://localhost:8080/x",
    "http://[::1]:3000/cb",
    "urn:ietf:rfc:3986",
])
def test_absolute_urls_are_valid(url: str) -> None:
    assert url_problem(url) is None


@pytest.mark.parametrize("url", ["example.com/connect", "/connect?x=1", "not a url", "https://", "http://exa mple.com/",
                                 "", 42, "https://example.com:port/"])
def test_relative_references_and_text_are_not_valid_urls(url: object) -> None:
    assert url_problem(url) is not None


@pytest.mark.parametrize("host, dev", [
    ("localhost", True), ("127.0.0.1", True), ("::1", True), ("10.1.2.3", True), ("192.168.0.7", True),
    ("app.localhost", True), ("mcp.test", True), ("printer.local", True),
    ("example.com", False), ("mcp.example.com", False), ("8.8.8.8", False),
])
def test_development_hosts(host: str, dev: bool) -> None:
    assert development_host(host) is dev


@pytest.mark.parametrize("url", [
    "https://example.com/connect?access_token=abc",
    "https://example.com/connect?elicitationId=1&api-key=abc",
    "https://example.com/connect#id_token=abc",
    "https://user:hunter2@example.com/",
    "https://example.com/profile?user=joe%40example.com",
])
def test_credentials_and_email_addresses_in_a_url_are_user_data(url: str) -> None:
    assert user_data_in_url(url)


@pytest.mark.parametrize("url", [
    "https://example.com/connect?elicitationId=550e8400-e29b-41d4-a716-446655440000",
    "https://example.com/authorize?response_type=code&client_id=mcp&state=xyz&redirect_uri=https%3A%2F%2Fmcp.example.com%2Fcb",
    "https://user@example.com/",
])
def test_a_connect_or_authorization_url_is_not_user_data(url: str) -> None:
    assert user_data_in_url(url) == []


def test_invalid_content_breaks_every_property_and_carries_the_mark() -> None:
    schema = _form(name={"type": "string"}, age={"type": "integer"}, ok={"type": "boolean"},
                   colors={"type": "array", "items": {"type": "string", "enum": ["r"]}})
    content = invalid_content(schema)
    assert content == {"name": MARK, "age": MARK_TEXT, "ok": MARK_TEXT, "colors": MARK_TEXT}
    from conformance.schema.validate import import_jsonschema

    validator = import_jsonschema().Draft202012Validator(schema)
    assert {e.path[0] for e in validator.iter_errors(content)} == set(schema["properties"])
