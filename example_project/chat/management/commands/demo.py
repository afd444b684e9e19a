"""``manage.py demo``: migrate, create the demo login, start the site and the django-q2 cluster.

The web server (``runserver``) and the cluster (``qcluster``) run as child processes; Ctrl+C
stops both. ``--no-serve`` only migrates and prints the login.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = (
        "Set up and run the example: migrate, create a demo login (printed), then run the web "
        "server and the django-q2 cluster together until Ctrl+C."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--port", type=int, default=8000, help="web server port (8000)")
        parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
        parser.add_argument("--username", default="demo", help="demo login name (demo)")
        parser.add_argument("--password", default="demo", help="demo login password (demo)")
        parser.add_argument(
            "--no-serve",
            action="store_true",
            help="only migrate and create the login; do not start the server and the cluster",
        )
        parser.add_argument("--no-cluster", action="store_true", help="start the web server only")

    def handle(self, *args: Any, **options: Any) -> None:
        call_command("migrate", interactive=False, verbosity=0)
        self.stdout.write("Database migrated.")
        created = self.demo_login(options["username"], options["password"])
        url = f"http://{options['host']}:{options['port']}/"
        self.stdout.write(
            self.style.SUCCESS(
                f"{'Created' if created else 'Reusing'} the demo login: "
                f"username {options['username']!r}, password {options['password']!r}"
            )
        )
        self.stdout.write(f"Open {url} and log in. Memory screen: {url}memory/")
        self.stdout.write(
            f"Admin ({url}admin/): make your own login with `python manage.py createsuperuser`."
        )
        config = getattr(settings, "CHAT_MODEL_CONFIG", {})
        if config.get("BACKEND", "").endswith(".DemoAgent"):
            self.stdout.write(
                "Model: the offline demo agent (a scripted demo, not a language model). "
                "Set OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL, or ANTHROPIC_API_KEY "
                "and ANTHROPIC_MODEL, for a real model."
            )
        else:
            model = config.get("OPTIONS", {})
            self.stdout.write(f"Model: {model.get('model')} at {model.get('base_url')}.")
        if options["no_serve"]:
            return
        self.serve(options["host"], options["port"], with_cluster=not options["no_cluster"])

    def demo_login(self, username: str, password: str) -> bool:
        """Create the demo login, or reset the password of the existing one to the printed one.

        The login is an ordinary person: its password is printed and well known, so it must
        not open the admin (which shows everyone's notes). ``createsuperuser`` makes an admin.
        """
        User = get_user_model()
        lookup: dict[str, Any] = {User.USERNAME_FIELD: username}
        user, created = User.objects.get_or_create(**lookup)
        user.set_password(password)
        user.is_staff = user.is_superuser = False
        user.save()
        return created

    def serve(self, host: str, port: int, *, with_cluster: bool) -> None:
        commands = [["runserver", f"{host}:{port}", "--noreload"]]
        if with_cluster:
            commands.append(["qcluster"])
        environment = {**os.environ, "PYTHONUNBUFFERED": "1"}
        environment.setdefault("DJANGO_SETTINGS_MODULE", settings.SETTINGS_MODULE)
        # Each child leads its own process group: Ctrl+C reaches only this command, which then
        # stops each child once, and can clean up a child's own subprocesses if it must.
        children = [
            subprocess.Popen(
                [sys.executable, "-m", "django", *command],
                cwd=settings.BASE_DIR,
                env=environment,
                start_new_session=True,
            )
            for command in commands
        ]
        names = ["web server", "django-q2 cluster"]
        started = ", ".join(
            f"{name} (pid {child.pid})" for name, child in zip(names, children, strict=False)
        )
        self.stdout.write(f"Started: {started}. Stop with Ctrl+C.")
        self.stdout.flush()

        def stop(signum: int, _frame: Any) -> None:
            raise KeyboardInterrupt

        signal.signal(signal.SIGTERM, stop)
        try:
            while all(child.poll() is None for child in children):
                time.sleep(0.5)
            self.stderr.write("A child process exited; stopping the other one.")
        except KeyboardInterrupt:
            self.stdout.write("\nStopping…")
        finally:
            # A second Ctrl+C must not leave the children running half-stopped.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            stop_all(children)


def stop_all(children: list[subprocess.Popen], grace: float = 20) -> None:
    """Stop each child with one SIGTERM (qcluster then stops its workers), wait, then make sure
    nothing of its process group is left."""
    for child in children:
        if child.poll() is None:
            child.terminate()
    deadline = time.monotonic() + grace
    for child in children:
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    for child in children:
        try:
            os.killpg(child.pid, signal.SIGKILL)  # leftovers only: a clean stop leaves none
        except (ProcessLookupError, PermissionError):
            pass
        child.wait()
