from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ChatConfig(AppConfig):
    name = "example_project.chat"
    label = "chat"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = _("Chats")  # the admin's section, translated (not the label "chat")

    def ready(self) -> None:
        from django.db.models.signals import post_delete

        from agent_memory.signals import note_deleted

        from .forgetting import on_note_deleted
        from .origins import forget_chat

        post_delete.connect(forget_chat, sender=self.get_model("Chat"), dispatch_uid="chat-origins")
        # A deleted note's text leaves the stored chats too (ids come, the chat finds the text).
        note_deleted.connect(on_note_deleted, dispatch_uid="chat-forget-notes")
