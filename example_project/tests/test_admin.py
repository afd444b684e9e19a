"""The example's chat in the admin, beside the app's sections."""

from __future__ import annotations

from django.contrib.auth import get_user_model


def test_the_russian_admin_names_the_chat_section(client, db):
    staff = get_user_model().objects.create_superuser("ops", "ops@example.com", "pw-for-tests")
    client.force_login(staff)
    index = client.get("/admin/", HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    assert "Чаты" in index and "Память агента" in index
