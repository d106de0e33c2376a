"""The save: a browser tool checked and kept (:mod:`.tool`), the checks that need the browser
(:mod:`.checks`), the atomic write that keeps the replaced version and the restore
(:mod:`.store`), and a note saved (:mod:`.notes`)."""
