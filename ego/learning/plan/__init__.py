"""A save before anything is written, and the versions saves keep.

What a front end asks to save (:mod:`.draft`), the manifest that save would write, validated
(:mod:`.save_plan`), the versions a replaced tool leaves (:mod:`.history`), the per-site lock
(:mod:`.locks`) and the modes written files get (:mod:`.modes`). The rooms above read these:
the offline cases run a planned save, health names the kept versions, the save writes them.
"""
