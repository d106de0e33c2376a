import pytest

# The shared helpers' asserts are rewritten as a test module's are, so that a failed check in
# one shows its values; registered before anything imports them.
pytest.register_assert_rewrite("tests.helpers")
