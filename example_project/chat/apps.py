from django.apps import AppConfig


class ChatConfig(AppConfig):
    name = "example_project.chat"
    label = "chat"
    default_auto_field = "django.db.models.BigAutoField"
