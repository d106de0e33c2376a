"""What the tests share: page servers and page builders, clients of ego's front ends, process
and subprocess helpers. Test modules import from here, never from one another or conftest
(tests/test_tiers.py holds that)."""
