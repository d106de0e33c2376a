"""Every exception ego raises.

All of them derive from :class:`EgoError`, so ``except ego.EgoError`` catches anything the
library raises on purpose. Each message is one line that says what happened and what to do.

The tree::

    EgoError
    ├── BrowserError                  the browser, its process or the connection to it
    │   ├── ChromeNotFoundError       no Chrome binary on this machine
    │   ├── ChromeLaunchError         Chrome started but never offered a debugging endpoint
    │   ├── ProfileInUseError         another Chrome holds the profile folder
    │   ├── ConnectionFailedError     an endpoint could not be reached or refused us
    │   ├── BrowserClosedError        the connection closed or Chrome died
    │   ├── CommandTimeoutError       a CDP command got no answer in time
    │   ├── ProtocolError             Chrome answered a command with an error
    │   ├── TabClosedError            the tab went away while a call was using it
    │   ├── NavigationError           a navigation failed or did not reach its lifecycle point
    │   │   └── OriginBlockedError    ... refused by the browser's origin or scheme limits
    │   ├── ContextDestroyedError     the page navigated away during an evaluate
    │   ├── FrameDetachedError        a frame was removed from its page while a call used it
    │   ├── FrameNotFoundError        no frame of the tab matches what tab.frame() asked for
    │   ├── DownloadFailedError       a download was cancelled or failed
    │   ├── TargetCrashedError        the tab's renderer crashed; reload or close the tab
    │   ├── DialogOpenError           a page dialog (alert, confirm, ...) blocks the tab
    │   ├── CommandTooLargeError      a command is larger than Chrome accepts; nothing was sent
    │   ├── ElementNotFoundError      no element matches a selector given to click or type
    │   ├── NotRetriedError           a write/irreversible call was cut short; not run again
    │   └── PoolExhaustedError        every browser of a pool is gone and none could be replaced
    ├── JavaScriptError               code in the page threw
    │   └── BrowserToolError          ... inside a learning's browser tool (names site, tool, file)
    ├── ReplayError                   recording, replaying or testing against a HAR went wrong
    │   ├── HarFormatError            a HAR file is not HAR 1.2 (not JSON, no log.entries, ...)
    │   ├── UnmatchedRequestError     strict replay: the page asked for something the HAR lacks
    │   └── InvalidCasesError         a learning's tests/cases.json is broken
    ├── BatchFileError                a batch's input or output file cannot be used (a ValueError)
    ├── FileAccessError               a path outside the folders a server may use
    └── LearningError                 a learning (site, tool, skill) cannot be used as asked
        ├── UnknownSiteError          no site with that id in any learnings root
        ├── InvalidManifestError      the site's manifest is broken; the site is unusable
        │   └── PackIntegrityError    ... a pack's site differs from what its installer recorded
        ├── UnknownToolError          the manifest declares no such tool
        ├── UnsafePathError           a path in the manifest leaves the site folder
        ├── InvalidArgsError          args fail the tool's schema
        ├── ToolLoadError             a tool file is missing or cannot be loaded
        ├── NoTabError                no tab to run a tool in, and none can be opened
        ├── SiteMismatchError         the tab given is not on the tool's site, nor any frame
        ├── ConfirmationRequiredError an irreversible tool was called without confirm=True
        ├── NeedsLoginError           NEEDS_LOGIN: the tool found no usable session
        ├── SkillBrokenError          SKILL_BROKEN: the site no longer matches the tool
        ├── ReturnsMismatchError      a result fails the tool's ``returns`` schema
        ├── UnknownSkillError         no skill with that id in any skills root
        ├── InvalidSkillError         a skill's SKILL.md or evaluate.js is broken
        ├── MissingCapabilityError    a skill needs a capability the harness lacks
        ├── SkillExistsError          an import would overwrite a skill (pass overwrite=True)
        ├── SaveRefusedError          a learning was not saved: a check failed, nothing written
        │   ├── SnapshotReferenceError  ... the source uses snapshot refs or pixel coordinates
        │   └── CaseRegressionError     ... the new source fails offline cases the current passes
        ├── WorkspaceRequiredError    saving needs an agent workspace (EGO_WORKSPACE)
        ├── SiteBusyError             another save holds the site's lock for too long
        ├── UnknownVersionError       a tool's history has no such saved version
        ├── UnknownPackError          no installed learning pack has that name
        └── PackBuildError            a learning pack could not be built; nothing was written
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "BatchFileError",
    "BrowserClosedError",
    "BrowserError",
    "BrowserToolError",
    "CaseRegressionError",
    "ChromeLaunchError",
    "ChromeNotFoundError",
    "CommandTimeoutError",
    "CommandTooLargeError",
    "ConfirmationRequiredError",
    "ConnectionFailedError",
    "ContextDestroyedError",
    "DialogOpenError",
    "DownloadFailedError",
    "EgoError",
    "ElementNotFoundError",
    "FileAccessError",
    "FrameDetachedError",
    "FrameNotFoundError",
    "HarFormatError",
    "InvalidArgsError",
    "InvalidCasesError",
    "InvalidManifestError",
    "InvalidSkillError",
    "JavaScriptError",
    "LearningError",
    "MissingCapabilityError",
    "NavigationError",
    "NeedsLoginError",
    "NoTabError",
    "NotRetriedError",
    "OriginBlockedError",
    "PackBuildError",
    "PackIntegrityError",
    "PoolExhaustedError",
    "ProfileInUseError",
    "ProtocolError",
    "ReplayError",
    "ReturnsMismatchError",
    "SaveRefusedError",
    "SiteBusyError",
    "SiteMismatchError",
    "SkillBrokenError",
    "SkillExistsError",
    "SnapshotReferenceError",
    "TabClosedError",
    "TargetCrashedError",
    "ToolLoadError",
    "UnknownPackError",
    "UnknownSiteError",
    "UnknownSkillError",
    "UnknownToolError",
    "UnknownVersionError",
    "UnmatchedRequestError",
    "UnsafePathError",
    "WorkspaceRequiredError",
]


class EgoError(Exception):
    """Base class of every error ego raises on purpose."""


class BrowserError(EgoError):
    """Something went wrong with the browser, its process or the connection to it."""


class ChromeNotFoundError(BrowserError):
    """No Chrome or Chromium binary was found."""


class ChromeLaunchError(BrowserError):
    """Chrome was started but did not become usable."""


class ProfileInUseError(BrowserError):
    """The profile folder is locked by a Chrome that is still running."""

    def __init__(self, message: str, *, profile_dir: str, pid: int | None) -> None:
        super().__init__(message)
        self.profile_dir = profile_dir
        self.pid = pid


class ConnectionFailedError(BrowserError):
    """An endpoint could not be reached, or it refused the connection."""


class BrowserClosedError(BrowserError):
    """The connection to the browser closed; every pending and later command fails with this."""


class CommandTimeoutError(BrowserError, TimeoutError):
    """A CDP command, a wait or an evaluate got no answer within its timeout."""


class ProtocolError(BrowserError):
    """Chrome answered a command with a protocol error."""

    def __init__(self, message: str, *, method: str, code: int | None = None) -> None:
        super().__init__(message)
        self.method = method
        self.code = code


class TabClosedError(BrowserError):
    """The tab (CDP target) closed or detached while a call was using it."""


class NavigationError(BrowserError):
    """A navigation failed (DNS, refused, aborted) before reaching its lifecycle point."""


class OriginBlockedError(NavigationError):
    """A navigation was refused by the browser's limits: an origin outside the allowed ones,
    a blocked one, or a local URL (``file:``, ``chrome:``) where those are not allowed.

    Attributes:
        url: the URL refused.
    """

    def __init__(self, message: str, *, url: str) -> None:
        super().__init__(message)
        self.url = url


class ContextDestroyedError(BrowserError):
    """The page's JavaScript context went away (usually a navigation) during an evaluate."""


class FrameDetachedError(BrowserError):
    """A frame was removed from its page before or while a call used it."""


class FrameNotFoundError(BrowserError):
    """No frame of the tab matches what ``tab.frame()`` asked for within its timeout."""


class DownloadFailedError(BrowserError):
    """A download was cancelled or failed (by the page, the server, or the browser closing)."""


class TargetCrashedError(BrowserError):
    """The tab's renderer process crashed (or was killed).

    Pending and later calls on that tab fail with this until it is reloaded
    (:meth:`ego.Tab.reload` or a navigation) or closed; other tabs are untouched.
    """


class DialogOpenError(BrowserError):
    """A JavaScript dialog (``alert``, ``confirm``, ``prompt``, ``beforeunload``) blocks the tab.

    While it is open the page runs nothing: pending and new calls on the tab fail with this
    at once instead of waiting for their timeout. Handle it (``tab.handle_dialog``) or let the
    launch's dialog policy answer it.

    Attributes:
        dialog_type: ``"alert"``, ``"confirm"``, ``"prompt"`` or ``"beforeunload"``.
        dialog_message: the text the page showed.
        url: the page that opened it.
    """

    def __init__(self, message: str, *, dialog_type: str, dialog_message: str, url: str) -> None:
        super().__init__(message)
        self.dialog_type = dialog_type
        self.dialog_message = dialog_message
        self.url = url


class CommandTooLargeError(BrowserError, ValueError):
    """A command is larger than Chrome accepts on its DevTools socket; it was not sent.

    Attributes:
        size: the command's size in bytes.
        limit: the largest command ego sends.
    """

    def __init__(self, message: str, *, size: int, limit: int) -> None:
        super().__init__(message)
        self.size = size
        self.limit = limit


class ElementNotFoundError(BrowserError):
    """No element on the page matches the selector given to ``click`` or ``type``."""

    def __init__(self, message: str, *, selector: str) -> None:
        super().__init__(message)
        self.selector = selector


class JavaScriptError(EgoError):
    """JavaScript running in the page threw.

    Attributes:
        name: the JS error class, e.g. ``TypeError`` (``"Error"`` for a thrown non-Error).
        js_message: the JS error's message.
        stack: the JS stack as the page formats it, or ``""``.
        url: the script URL of the throwing frame (a tool's ``sourceURL`` when it has one).
        line: 1-based line of the throwing frame, or ``None``.
        column: 1-based column, or ``None``.
        value: the thrown value when it was not an Error object (``throw "x"``).
    """

    def __init__(
        self,
        message: str,
        *,
        name: str = "Error",
        js_message: str = "",
        stack: str = "",
        url: str = "",
        line: int | None = None,
        column: int | None = None,
        value: Any = None,
    ) -> None:
        super().__init__(message)
        self.name = name
        self.js_message = js_message
        self.stack = stack
        self.url = url
        self.line = line
        self.column = column
        self.value = value


class BrowserToolError(JavaScriptError):
    """A learning's browser tool threw in the page.

    The message names the site, the tool, the tool file and the line in that file. The JS
    details (``name``, ``js_message``, ``stack``, ``line``) are as in :class:`JavaScriptError`.
    """

    def __init__(self, message: str, *, site_id: str, tool: str, file: str, **details: Any) -> None:
        super().__init__(message, **details)
        self.site_id = site_id
        self.tool = tool
        self.file = file


class LearningError(EgoError):
    """A learning (site, tool or skill) cannot be used as asked."""


class UnknownSiteError(LearningError):
    """No learnings root holds a site with this id."""


class InvalidManifestError(LearningError):
    """A site's manifest is broken (bad JSON, wrong schema, id not matching its folder)."""

    def __init__(self, message: str, *, site_id: str, problems: list[str]) -> None:
        super().__init__(message)
        self.site_id = site_id
        self.problems = problems


class PackIntegrityError(InvalidManifestError):
    """A site of an installed learning pack differs from the files its installer recorded
    (the distribution's RECORD): a file changed, went missing or was added since the install.

    ``problems`` names each file; only that site is unusable, every other site keeps working.
    """


class UnknownToolError(LearningError):
    """The site's manifest does not declare the tool asked for."""


class UnsafePathError(LearningError):
    """A manifest path is absolute, holds ``..`` or a backslash, or resolves outside the site."""


class InvalidArgsError(LearningError, ValueError):
    """Args fail the tool's schema; nothing was sent to the browser."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


class ToolLoadError(LearningError):
    """A tool's file is missing, unreadable, or (for Python tools) fails to import."""


class NoTabError(LearningError):
    """No open tab matches the site, and the manifest gives no start URL to open one."""


class SiteMismatchError(LearningError):
    """A tool was given a tab that is not on its site, and no frame of the tab is either.

    Attributes:
        host: the host (with port) of the tab's page.
        domains: the site's domains.
    """

    def __init__(self, message: str, *, host: str, domains: list[str]) -> None:
        super().__init__(message)
        self.host = host
        self.domains = domains


class ReturnsMismatchError(LearningError):
    """A tool's result does not match the ``returns`` schema its manifest declares."""


class ConfirmationRequiredError(LearningError):
    """An ``irreversible`` tool (it posts, sends, pays) was called without ``confirm=True``.

    The message words the fix in Python; front ends word it their own way from ``subject``.

    Attributes:
        subject: what was refused, e.g. ``"demo-shop/place_order"`` or ``"skill a.com/post"``.
    """

    def __init__(self, subject: str) -> None:
        self.subject = subject
        super().__init__(self.worded("call it again with confirm=True"))

    def worded(self, fix: str) -> str:
        """The message with ``fix`` in the caller's words (``"run it again with --confirm"``)."""
        return (
            f"{self.subject} is irreversible (it publishes or sends for real): {fix} if that is "
            "what you want"
        )

    @classmethod
    def check(cls, subject: str, side_effect: str, confirm: bool) -> None:
        """Raise for an ``irreversible`` ``side_effect`` unless ``confirm``."""
        if side_effect == "irreversible" and not confirm:
            raise cls(subject)


class NeedsLoginError(LearningError):
    """NEEDS_LOGIN: a tool that rides on the session found none.

    Recovery: a person logs in by hand in that browser profile, then the call is retried.
    Never automate the login and never relearn the tool.
    """

    def __init__(self, message: str, *, site_id: str, tool: str, detail: str) -> None:
        super().__init__(message)
        self.site_id = site_id
        self.tool = tool
        self.detail = detail


class SkillBrokenError(LearningError):
    """SKILL_BROKEN: the site no longer matches the tool (a selector or an API is gone).

    Recovery: the tool needs a new version; retrying will not help.
    """

    def __init__(self, message: str, *, site_id: str, tool: str, detail: str) -> None:
        super().__init__(message)
        self.site_id = site_id
        self.tool = tool
        self.detail = detail


class UnknownSkillError(LearningError):
    """No skills root holds a skill with this id (``<domain>/<task>``)."""


class InvalidSkillError(LearningError):
    """A skill is broken (frontmatter, naming, sections, extractor); it cannot run.

    Attributes:
        skill_id: the skill's catalog id.
        problems: every problem found, one line each.
    """

    def __init__(self, message: str, *, skill_id: str, problems: list[str]) -> None:
        super().__init__(message)
        self.skill_id = skill_id
        self.problems = problems


class MissingCapabilityError(LearningError):
    """A skill ``needs`` a browser capability that this harness does not provide.

    Attributes:
        skill_id: the skill's catalog id.
        capability: the first missing capability; ``missing`` lists them all.
    """

    def __init__(self, message: str, *, skill_id: str, missing: list[str]) -> None:
        super().__init__(message)
        self.skill_id = skill_id
        self.missing = missing
        self.capability = missing[0]


class SkillExistsError(LearningError, FileExistsError):
    """An import would overwrite a skill that is already in the workspace."""


class SaveRefusedError(LearningError):
    """A learning (browser tool or note) was not saved: a check failed and nothing was written.

    Attributes:
        site_id: the site it was to be saved into.
        name: the tool's or the note's name.
        reason: which check failed, one of ``"site id"``, ``"name"``, ``"source"``,
            ``"snapshot refs"``, ``"manifest"``, ``"syntax"``, ``"try run"``, ``"domains"``,
            ``"site"``, ``"cases"``.
        problems: every problem found, one line each.
    """

    def __init__(
        self, message: str, *, site_id: str, name: str, reason: str, problems: list[str]
    ) -> None:
        super().__init__(message)
        self.site_id = site_id
        self.name = name
        self.reason = reason
        self.problems = problems


class SnapshotReferenceError(SaveRefusedError):
    """A tool's source holds references that only live in one snapshot of the page.

    Ephemeral element refs (``ref=e12``, ``aria-ref``, ``querySelector('e12')``) and pixel
    coordinates (``elementFromPoint``, ``clientX: 120``, ``Input.dispatchMouseEvent``) stop
    working on the next page load; a saved tool must use stable selectors or the site's own
    API. ``problems`` lists each finding with its line.
    """


class CaseRegressionError(SaveRefusedError):
    """A new version of a tool fails offline cases (``tests/cases.json``) that pass with the
    version it would replace; nothing was written.

    The cases ran against their recordings, offline. Fix the source, or save it anyway (the
    message words how in the caller's front end: ``force=True``, ``--force``,
    ``force: true``). ``problems`` has one line per broken case with its reason.

    Attributes:
        cases: the names of the broken cases.
    """

    def __init__(
        self, message: str, *, site_id: str, name: str, problems: list[str], cases: list[str]
    ) -> None:
        super().__init__(message, site_id=site_id, name=name, reason="cases", problems=problems)
        self.cases = cases


class WorkspaceRequiredError(LearningError):
    """Saving a learning needs an agent workspace, and none is set.

    Set ``EGO_WORKSPACE`` (or ``--workspace``), or pass ``workspace=`` to ``ego.launch`` or
    ``Learnings``; learnings are saved into ``<workspace>/learnings/``, never into the project.
    """


class SiteBusyError(LearningError):
    """Another thread or process kept a site's lock longer than a save waits for it.

    Attributes:
        lock_file: the lock file, which may be removed by hand when no ego process runs.
    """

    def __init__(self, message: str, *, lock_file: str) -> None:
        super().__init__(message)
        self.lock_file = lock_file


class UnknownVersionError(LearningError):
    """A tool's history holds no saved version with that id (the message lists them)."""


class UnknownPackError(LearningError):
    """No installed distribution with an ``ego.learnings`` entry point has this name."""


class PackBuildError(LearningError):
    """A learning pack was not built: a site is invalid, a name or version is not allowed, or
    the build backend failed. Nothing was written."""


class ReplayError(EgoError):
    """Recording, replaying or testing against a HAR file went wrong."""


class HarFormatError(ReplayError, ValueError):
    """A HAR file cannot be used: not JSON, no ``log.entries``, an entry without a URL, bad base64.

    Attributes:
        path: the file, when the HAR came from one, else ``None``.
    """

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class UnmatchedRequestError(ReplayError):
    """Strict replay: the page made requests for which the HAR holds no entry.

    Each was failed like a network error when it happened; this error reports them afterwards.

    Attributes:
        requests: ``(method, url)`` of every unmatched request, in the order they were made.
    """

    def __init__(self, message: str, *, requests: list[tuple[str, str]]) -> None:
        super().__init__(message)
        self.requests = requests


class InvalidCasesError(ReplayError):
    """A learning's ``tests/cases.json`` is missing pieces, is not JSON, or names unknown files.

    Attributes:
        site_id: the site whose cases are broken.
        problems: every problem found, one line each.
    """

    def __init__(self, message: str, *, site_id: str, problems: list[str]) -> None:
        super().__init__(message)
        self.site_id = site_id
        self.problems = problems


class NotRetriedError(BrowserError):
    """A ``write`` or ``irreversible`` call was cut short (browser died, tab closed) mid-call.

    A pool retries ``read`` calls on another browser, never these: the tool may or may not
    have run, and only the caller can check. The message says why, for example
    ``not retried: demo-shop/add_to_cart is a write tool and the browser died mid-call ...``.

    Attributes:
        site_id, tool: the call.
        side_effect: ``"write"`` or ``"irreversible"``.
    """

    def __init__(self, message: str, *, site_id: str, tool: str, side_effect: str) -> None:
        super().__init__(message)
        self.site_id = site_id
        self.tool = tool
        self.side_effect = side_effect


class PoolExhaustedError(BrowserError):
    """Every browser of a pool died or never started, and none could be replaced."""


class FileAccessError(EgoError, PermissionError):
    """A path lies outside the folders a server may use, or names a file it may not replace.

    Attributes:
        path: the path, resolved.
    """

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class BatchFileError(EgoError, ValueError):
    """A batch's input or output file cannot be used (a line in the middle is corrupt, or the
    output was written for another input)."""
