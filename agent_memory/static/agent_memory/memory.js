/* The memory screen's small enhancements; everything works without them.
 *
 * - a live character count under the note's text (the server checks the limit too);
 * - Escape cancels the note editor and any confirmation (a delete, a revert), and closes a
 *   note's menu;
 * - one menu open at a time, closed by a click elsewhere;
 * - messages from the last action disappear when the next one starts;
 * - the category picker suggests the person's categories after each comma;
 * - after an action the page lands where the person acted: on the element marked
 *   [data-am-land] (the note saved, the next note after a delete, a section's message), or
 *   on a refused form's first field in error, focused and scrolled into view, where htmx's
 *   boost would have jumped to the top;
 * - "Saved" and other short confirmations in a note's row fade after a few seconds;
 * - the note's text box grows with its text; a field's error goes when the field changes.
 */
(function () {
  "use strict";

  if (window.htmx) {
    // The same safety settings the app's own page sets in <meta name="htmx-config">, for a
    // screen shown inside the host's page.
    Object.assign(window.htmx.config, {
      allowEval: false,
      allowScriptTags: false,
      historyCacheSize: 0,
      refreshOnHistoryMiss: true,
    });
  }

  function screen() {
    return document.getElementById("am-screen");
  }

  // --- character count ----------------------------------------------------------------------

  function updateCounter(textarea) {
    var counter = document.getElementById(textarea.id + "-count");
    if (!counter) return;
    var limit = parseInt(textarea.getAttribute("data-am-limit"), 10);
    // Characters as the server counts them: code points of the trimmed text.
    var count = Array.from(textarea.value.trim()).length;
    var over = count - limit;
    var template = over > 0 ? counter.getAttribute("data-am-counter-over") : counter.getAttribute("data-am-counter");
    counter.textContent = template.replace("{count}", count).replace("{over}", over);
    counter.classList.toggle("am-counter--over", over > 0);
    if (over > 0) {
      textarea.setAttribute("aria-invalid", "true");
    } else if (!textarea.closest(".am-field").querySelector(".am-field-error")) {
      textarea.removeAttribute("aria-invalid");
    }
  }

  function updateCounters(root) {
    (root || document).querySelectorAll("textarea[data-am-limit]").forEach(updateCounter);
  }

  // The text box grows with its text where CSS cannot do it (field-sizing).
  var sizesItself = window.CSS && CSS.supports && CSS.supports("field-sizing", "content");

  function grow(textarea) {
    if (sizesItself) return;
    textarea.style.height = "auto";
    textarea.style.height = Math.min(textarea.scrollHeight + 2, window.innerHeight * 0.6) + "px";
  }

  // An error about a field goes once the person changes that field: it is about the old text.
  function clearFieldError(field) {
    var box = field.closest(".am-field");
    var error = box ? box.querySelector(".am-field-error") : null;
    if (!error) return;
    error.remove();
    field.removeAttribute("aria-invalid");
    var described = (field.getAttribute("aria-describedby") || "").split(" ").filter(function (id) {
      return id && id !== error.id;
    });
    field.setAttribute("aria-describedby", described.join(" "));
  }

  document.addEventListener("input", function (event) {
    var target = event.target;
    if (target.matches && target.matches(".am-field input, .am-field textarea")) clearFieldError(target);
    if (target.matches && target.matches("textarea[data-am-limit]")) {
      grow(target);
      updateCounter(target);
    }
    if (target.matches && target.matches("input[data-am-categories]")) suggestCategories(target);
  });

  // --- category picker ------------------------------------------------------------------------

  function suggestCategories(input) {
    // A datalist suggests whole values; offer "what is typed so far, <category>" so the person's
    // categories are suggested for the second and third category too.
    var list = document.getElementById(input.getAttribute("list"));
    if (!list) return;
    if (!list.hasAttribute("data-am-all")) {
      var names = Array.from(list.options).map(function (option) { return option.value; });
      list.setAttribute("data-am-all", JSON.stringify(names));
    }
    var knownCategories = JSON.parse(list.getAttribute("data-am-all"));
    var value = input.value;
    var cut = value.lastIndexOf(",");
    var prefix = cut >= 0 ? value.slice(0, cut + 1) + " " : "";
    var typed = prefix
      ? value.slice(0, cut).split(",").map(function (name) { return name.trim().toLowerCase(); })
      : [];
    list.textContent = "";
    knownCategories.forEach(function (name) {
      if (typed.indexOf(name.toLowerCase()) >= 0) return;
      var option = document.createElement("option");
      option.value = prefix + name;
      list.appendChild(option);
    });
  }

  // --- Escape, menus ------------------------------------------------------------------------

  function closeMenus(except) {
    document.querySelectorAll("details.am-menu[open]").forEach(function (menu) {
      if (menu !== except) menu.removeAttribute("open");
    });
  }

  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape" || event.defaultPrevented) return;
    var active = document.activeElement;
    var menu = active && active.closest ? active.closest("details.am-menu[open]") : null;
    if (menu) {
      menu.removeAttribute("open");
      menu.querySelector("summary").focus();
      event.preventDefault();
      return;
    }
    // The editor or confirmation the focus is in; else the only one open on the screen.
    var scope = active && active.closest ? active.closest(".am-editor, .am-confirm") : null;
    if (!scope) {
      var open = document.querySelectorAll(
        ".am-note .am-editor, .am-note .am-confirm, .am-merge-group .am-confirm, .am-confirm--erase"
      );
      if (open.length === 1) scope = open[0];
    }
    var cancel = scope ? scope.querySelector("[data-am-cancel]") : null;
    if (cancel) {
      event.preventDefault();
      cancel.click();
      return;
    }
    var add = active && active.closest ? active.closest("details.am-add-details[open]") : null;
    if (add) {
      event.preventDefault();
      add.removeAttribute("open");
      add.querySelector("summary").focus();
    }
  });

  document.addEventListener("click", function (event) {
    var menu = event.target.closest ? event.target.closest("details.am-menu") : null;
    closeMenus(menu);
  });

  document.addEventListener("toggle", function (event) {
    var menu = event.target;
    if (menu.matches && menu.matches("details.am-menu") && menu.open) {
      closeMenus(menu);
      var first = menu.querySelector(".am-menu-item");
      if (first) first.focus();
    }
  }, true);

  // --- messages clear on the next action ----------------------------------------------------

  function clearMessages() {
    var root = screen();
    if (!root) return;
    root.querySelectorAll(".am-messages, .am-import-result").forEach(function (node) {
      node.remove();
    });
  }

  document.addEventListener("htmx:beforeRequest", function (event) {
    var source = event.detail && event.detail.elt;
    if (source && screen() && screen().contains(source)) clearMessages();
  });
  document.addEventListener("submit", function (event) {
    if (screen() && screen().contains(event.target)) clearMessages();
  });

  // --- after each swap ----------------------------------------------------------------------

  function inView(node) {
    var box = node.getBoundingClientRect();
    return box.top >= 0 && box.bottom <= window.innerHeight;
  }

  // Only in what was just shown (the page, or what a swap brought), and once: a later swap
  // (opening an editor) must not pull the focus back to an earlier result.
  function land(root) {
    // An outerHTML swap leaves the old element detached: look in the screen then.
    if (!root || !root.querySelector || !document.contains(root)) root = screen();
    if (!root) return;
    var target = root.matches && root.matches("[data-am-land]") ? root : root.querySelector("[data-am-land]");
    if (target) {
      target.removeAttribute("data-am-land");
      target.classList.add("am-landed");
    } else {
      // A refused form: its first field in error (the server marks it autofocus), in view.
      target = root.querySelector(".am-editor [autofocus][aria-invalid]");
      if (!target) return;
      target.removeAttribute("autofocus");
    }
    if (document.activeElement !== target && !target.contains(document.activeElement)) {
      target.focus({ preventScroll: true });
    }
    if (!inView(target)) target.scrollIntoView({ block: "center" });
  }

  function fadeConfirmations(root) {
    (root || document).querySelectorAll(".am-note > .am-messages").forEach(function (list) {
      if (!list.querySelector(".am-message--success")) return;
      window.setTimeout(function () { list.remove(); }, 6000);
    });
  }

  document.addEventListener("htmx:afterSettle", function (event) {
    updateCounters(event.detail && event.detail.elt);
    // After htmx's own scrolling (a boosted answer shows the top of the page).
    var swapped = event.detail && event.detail.elt;
    window.setTimeout(function () { land(swapped); }, 0);
    fadeConfirmations();
  });

  function ready() {
    updateCounters();
    land(screen());
    fadeConfirmations();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", ready);
  } else {
    ready();
  }
})();
