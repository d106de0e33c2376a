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
    │   ├── OriginLimitsError         the origin limits could not be set up on a page: closed
    │   ├── NavigationError           a navigation failed or did not reach its lifecycle point
    │   │   ├── OriginBlockedError    ... refused by the browser's origin or scheme limits
    │   │   ├── SiteUnreachableError  ... the site's server did not answer (refused, no DNS)
    │   │   └── ResendRefusedError    ... a reload that would send a form (a POST) again
    │   ├── ContextDestroyedError     the page navigated away during an evaluate
    │   ├── FrameDetachedError        a frame was removed from its page while a call used it
    │   ├── FrameNotFoundError        no frame of the tab matches what tab.frame() asked for
    │   ├── WorkerEndedError          a worker ended before or while a call used it
    │   ├── DownloadFailedError       a download was cancelled or failed
    │   ├── TargetCrashedError        the tab's renderer crashed; reload or close the tab
    │   ├── DialogOpenError           a page dialog (alert, confirm, ...) blocks the tab
    │   ├── CommandTooLargeError      a command is larger than Chrome accepts; nothing was sent
    │   ├── ElementNotFoundError      no element matches a selector given to click or type
    │   │   ├── StaleRefError         ... a snapshot's ref whose node is gone: take a new one
    │   │   └── ElementNotActionableError ... it matches, but stays hidden, moving, disabled,
    │   │                                 covered or not editable
    │   ├── WrongElementError         an element of the wrong kind for the action (a link to
    │   │                             select, an option for its select); nothing was done
    │   ├── InvalidSelectorError      a malformed selector (also a ValueError); nothing ran
    │   ├── NoSelectorError           no selector finds a ref's node alone (a closed shadow root)
    │   ├── UnknownTabError           no open tab of this browser or context has that id
    │   ├── TabLimitError             a context has as many tabs open as it may (max_tabs)
    │   ├── NotRetriedError           a write/irreversible call was cut short; not run again
    │   └── PoolExhaustedError        every browser of a pool is gone and none could be replaced
    ├── JavaScriptError               code in the page threw
    │   └── BrowserToolError          ... inside a learning's browser tool (names site, tool, file)
    │       ├── TokenRejectedError    ... the site refused the token the page keeps (401, 403)
    │       └── CrossOriginRequestError ... it built a URL off the page's origin; nothing sent
    ├── ReplayError                   recording, replaying or testing against a HAR went wrong
    │   ├── HarFormatError            a HAR file is not HAR 1.2 (not JSON, no log.entries, ...)
    │   │   └── HarTooLargeError      ... over a bound (bytes, entries); not read whole
    │   ├── UnmatchedRequestError     strict replay: the page asked for something the HAR lacks
    │   └── InvalidCasesError         a learning's tests/cases.json is broken
    ├── BatchFileError                a batch's input or output file cannot be used (a ValueError)
    ├── FileAccessError               a path outside the folders a server may use
    ├── ListenError                   a server cannot listen where asked (a taken port)
    ├── StorageStateError             a saved login (cookies, storage) cannot be read or written
    │   └── StorageStateTooLargeError ... its file is over the size or item bound (not read)
    ├── TraceFileError                a trace cannot be written there, or a file is no trace
    └── LearningError                 a learning (site, tool, skill) cannot be used as asked
        ├── UnknownSiteError          no site with that id in any learnings root
        ├── InvalidManifestError      the site's manifest is broken; the site is unusable
        │   └── PackIntegrityError    ... a pack's site differs from what its installer recorded
        ├── UnknownToolError          the manifest declares no such tool
        ├── UnknownNoteError          the site has no note by that name
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
        │   ├── CaseRegressionError     ... the new source fails offline cases the current passes
        │   └── ForeignRequestError     ... its cases sent requests to another origin than the page
        ├── WorkspaceRequiredError    saving needs an agent workspace (EGO_WORKSPACE)
        ├── SiteBusyError             another save holds the site's lock for too long
        ├── UnknownVersionError       a tool's history has no such saved version
        ├── UnknownPackError          no installed learning pack has that name
        └── PackBuildError            a learning pack could not be built; nothing was written
"""

from __future__ import annotations

from .base import EgoError
from .browser import (
    BrowserClosedError,
    BrowserError,
    ChromeLaunchError,
    ChromeNotFoundError,
    CommandTimeoutError,
    CommandTooLargeError,
    ConnectionFailedError,
    ContextDestroyedError,
    DialogOpenError,
    DownloadFailedError,
    ElementNotActionableError,
    ElementNotFoundError,
    FrameDetachedError,
    FrameNotFoundError,
    InvalidSelectorError,
    NavigationError,
    NoSelectorError,
    NotRetriedError,
    OriginBlockedError,
    OriginLimitsError,
    PoolExhaustedError,
    ProfileInUseError,
    ProtocolError,
    ResendRefusedError,
    SiteUnreachableError,
    StaleRefError,
    TabClosedError,
    TabLimitError,
    TargetCrashedError,
    UnknownTabError,
    WorkerEndedError,
    WrongElementError,
)
from .files import (
    BatchFileError,
    FileAccessError,
    StorageStateError,
    StorageStateTooLargeError,
    TraceFileError,
)
from .javascript import (
    BrowserToolError,
    CrossOriginRequestError,
    JavaScriptError,
    TokenRejectedError,
)
from .learning import (
    CaseRegressionError,
    ConfirmationRequiredError,
    ForeignRequestError,
    InvalidArgsError,
    InvalidManifestError,
    InvalidSkillError,
    LearningError,
    MissingCapabilityError,
    NeedsLoginError,
    NoTabError,
    PackBuildError,
    PackIntegrityError,
    ReturnsMismatchError,
    SaveRefusedError,
    SiteBusyError,
    SiteMismatchError,
    SkillBrokenError,
    SkillExistsError,
    SnapshotReferenceError,
    ToolLoadError,
    UnknownNoteError,
    UnknownPackError,
    UnknownSiteError,
    UnknownSkillError,
    UnknownToolError,
    UnknownVersionError,
    UnsafePathError,
    WorkspaceRequiredError,
)
from .replay import (
    HarFormatError,
    HarTooLargeError,
    InvalidCasesError,
    ReplayError,
    UnmatchedRequestError,
)
from .serving import ListenError

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
    "CrossOriginRequestError",
    "DialogOpenError",
    "DownloadFailedError",
    "EgoError",
    "ElementNotActionableError",
    "ElementNotFoundError",
    "FileAccessError",
    "ForeignRequestError",
    "FrameDetachedError",
    "FrameNotFoundError",
    "HarFormatError",
    "HarTooLargeError",
    "InvalidArgsError",
    "InvalidCasesError",
    "InvalidManifestError",
    "InvalidSelectorError",
    "InvalidSkillError",
    "JavaScriptError",
    "LearningError",
    "ListenError",
    "MissingCapabilityError",
    "NavigationError",
    "NeedsLoginError",
    "NoSelectorError",
    "NoTabError",
    "NotRetriedError",
    "OriginBlockedError",
    "OriginLimitsError",
    "PackBuildError",
    "PackIntegrityError",
    "PoolExhaustedError",
    "ProfileInUseError",
    "ProtocolError",
    "ReplayError",
    "ResendRefusedError",
    "ReturnsMismatchError",
    "SaveRefusedError",
    "SiteBusyError",
    "SiteMismatchError",
    "SiteUnreachableError",
    "SkillBrokenError",
    "SkillExistsError",
    "SnapshotReferenceError",
    "StaleRefError",
    "StorageStateError",
    "StorageStateTooLargeError",
    "TabClosedError",
    "TabLimitError",
    "TargetCrashedError",
    "TokenRejectedError",
    "ToolLoadError",
    "TraceFileError",
    "UnknownNoteError",
    "UnknownPackError",
    "UnknownSiteError",
    "UnknownSkillError",
    "UnknownTabError",
    "UnknownToolError",
    "UnknownVersionError",
    "UnmatchedRequestError",
    "UnsafePathError",
    "WorkerEndedError",
    "WorkspaceRequiredError",
    "WrongElementError",
]
