"""The memory screen's "Download or import": the person's notes as a JSON file, and an import
of such a file (or of text with one note per line), all or nothing."""

from __future__ import annotations

import functools
import json
from typing import Any

from django.core.files.uploadhandler import FileUploadHandler
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.utils import timezone
from django.utils.datastructures import MultiValueDict
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods

from ..errors import AgentMemoryError, TooManyImports
from ..transfer import MAX_IMPORT_BYTES, check_import_size, parse_text
from .forms import ImportForm
from .page import MemoryPage, View, describe_error, render_screen, screen_url, screen_view


@screen_view
@require_GET
def export(request: HttpRequest, page: MemoryPage) -> HttpResponse:
    """Download my memory: the person's notes as a JSON file (the import reads it back)."""
    document = page.memory.export(page.person)
    response = HttpResponse(
        json.dumps(document, ensure_ascii=False, indent=2),
        content_type="application/json; charset=utf-8",
    )
    filename = f"memory-{timezone.localdate().isoformat()}.json"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


#: The largest import form read: the file's cap, and room for the other fields and the
#: multipart framing.
IMPORT_FORM_BYTES = MAX_IMPORT_BYTES + 64 * 1024


class BoundedUploadHandler(FileUploadHandler):
    """Refuses a multipart body past :data:`IMPORT_FORM_BYTES` before a byte of it is read:
    the form gets no fields and the view says the file is too large. Smaller bodies go on to
    the site's own handlers."""

    def handle_raw_input(
        self,
        input_data: Any,
        META: Any,
        content_length: int,
        boundary: Any,
        encoding: str | None = None,
    ) -> tuple[QueryDict, MultiValueDict[str, Any]] | None:
        if content_length <= IMPORT_FORM_BYTES:
            return None
        if self.request is not None:
            self.request.META[REFUSED_BODY] = content_length
        return QueryDict(encoding=encoding), MultiValueDict()

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None


#: Where :class:`BoundedUploadHandler` notes the length of a body it refused.
REFUSED_BODY = "agent_memory.refused_body_bytes"


def bounded_upload(view: View) -> View:
    """Install :class:`BoundedUploadHandler` before anything reads the body. The CSRF middleware
    would read it first, so this outer view is exempt; the wrapped view checks CSRF itself
    (:func:`screen_view`), on the bounded body."""

    @csrf_exempt
    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        request.upload_handlers.insert(0, BoundedUploadHandler(request))
        return view(request, *args, **kwargs)

    return wrapper


@bounded_upload
@screen_view
@require_http_methods(["GET", "HEAD", "POST"])
def import_notes(request: HttpRequest, page: MemoryPage) -> HttpResponse:
    """Import notes: a file from "Download my memory", or one note per line. All or nothing;
    notes already saved are skipped and listed on the page. A ``GET`` (a reload of the
    answer's address) goes back to the screen's import form. A body past 1 MB is refused
    unread; when the site already runs ``MAX_CONCURRENT_IMPORTS`` imports, the form says to try
    again (status 429, ``Retry-After``)."""
    if request.method != "POST":
        return HttpResponseRedirect(screen_url("am-transfer"))
    posted, files = request.POST, request.FILES  # read through the bounded handler
    refused = request.META.get(REFUSED_BODY)
    if refused is not None:
        form = ImportForm(posted, files)
        form.errors.clear()  # "required": there is a file, too large to be read
        try:
            check_import_size(refused)
        except AgentMemoryError as error:
            form.add_error("file", describe_error(page, error))
        return render_screen(page, status=400, import_form=form, focus_import=True)
    form = ImportForm(posted, files)
    if form.is_valid():
        try:
            # One of the site's import slots before the file is parsed (the API's rule).
            with page.memory.import_slot():
                result = page.memory.import_notes(
                    page.person,
                    parse_text(form.cleaned_data["file"]),
                    categories=form.cleaned_data["categories"] or None,
                )
        except TooManyImports as busy:
            form.add_error("file", describe_error(page, busy))
            response = render_screen(page, status=429, import_form=form, focus_import=True)
            response["Retry-After"] = str(busy.retry_after)
            return response
        except AgentMemoryError as error:
            form.add_error("file", describe_error(page, error))
        else:
            page.changed()
            return render_screen(page, import_result=result, focus_import=True)
    return render_screen(page, status=400, import_form=form, focus_import=True)
