"""Errors of learnings: sites, tools, skills, saves and packs used as asked."""

from __future__ import annotations

from .base import EgoError

__all__ = [
    "CaseRegressionError",
    "ConfirmationRequiredError",
    "ForeignRequestError",
    "InvalidArgsError",
    "InvalidManifestError",
    "InvalidSkillError",
    "LearningError",
    "MissingCapabilityError",
    "NeedsLoginError",
    "NoTabError",
    "PackBuildError",
    "PackIntegrityError",
    "ReturnsMismatchError",
    "SaveRefusedError",
    "SiteBusyError",
    "SiteMismatchError",
    "SkillBrokenError",
    "SkillExistsError",
    "SnapshotReferenceError",
    "ToolLoadError",
    "UnknownNoteError",
    "UnknownPackError",
    "UnknownSiteError",
    "UnknownSkillError",
    "UnknownToolError",
    "UnknownVersionError",
    "UnsafePathError",
    "WorkspaceRequiredError",
]


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


class UnknownNoteError(LearningError):
    """The site has no note by the name asked for (the message lists its notes)."""


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
            ``"site"``, ``"cases"``, ``"origin"``.
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


class ForeignRequestError(SaveRefusedError):
    """A tool's offline cases, run with the new source, sent requests to another origin than
    the case's page; nothing was written, and no ``force`` saves it.

    A learning runs in the page with the person's session: a request to another origin would
    carry its args, its body and any token it read there. Reading again what the page itself
    loaded before the tool ran (a GET of the same URL, such as its script bundle) is no such
    request.

    Attributes:
        requests: ``"METHOD URL"`` of each such request, with the case that made it.
        cases: the names of the cases that made them.
    """

    def __init__(
        self,
        message: str,
        *,
        site_id: str,
        name: str,
        problems: list[str],
        requests: list[str],
        cases: list[str],
    ) -> None:
        super().__init__(message, site_id=site_id, name=name, reason="origin", problems=problems)
        self.requests = requests
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
