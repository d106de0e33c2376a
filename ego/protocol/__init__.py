"""The protocol layer: the websocket, the CDP connection, the Chrome process, CDP values.

Nothing here knows tabs, learnings or sites; everything above talks to Chrome through it.
"""
