from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ChatConfig(AppConfig):
    name = "example_project.chat"
    label = "chat"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = _("Chats")  # the admin's section, translated (not the label "chat")

    def ready(self) -> None:
        from django.db.models.signals import post_delete

        from .origins import forget_chat

        post_delete.connect(forget_chat, sender=self.get_model("Chat"), dispatch_uid="chat-origins")
