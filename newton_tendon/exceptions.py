"""Warning categories newton exposes, under newton's names (``import newton_tendon as newton``)."""


class NewtonDeprecationWarning(DeprecationWarning):
    """Raised for a deprecated feature: here, newton's deprecated names that newton_tendon still accepts.

    It is a :class:`DeprecationWarning`, as newton's is (and, as there, not a :class:`UserWarning`), so
    ``warnings.filterwarnings(..., category=DeprecationWarning)`` covers it and Python hides it outside
    ``__main__`` unless the filters show deprecations. Exported as ``newton_tendon.NewtonDeprecationWarning``.
    """


class BuilderStateError(ValueError, RuntimeError):
    """A builder call made in the wrong state, e.g. ``begin_world`` inside an open world.

    It is a :class:`ValueError`, as every bad builder call here is, and a :class:`RuntimeError`, the
    class newton raises for the same misuse, so ``except RuntimeError`` written for newton still works.
    """


class UndeclaredAttributeError(ValueError, AttributeError):
    """A value was authored for a custom attribute that was never declared with ``add_custom_attribute``.

    It is a :class:`ValueError`, as every bad builder argument here is, and an :class:`AttributeError`,
    the class newton raises for the same mistake.
    """


class IndexTypeError(TypeError, ValueError):
    """An entity index of the wrong type (a float, a bool, None where an int body index belongs).

    A :class:`TypeError`, as our input rules say, and also a :class:`ValueError`, the class newton
    raises for the same input ("body index"), so code written against either library catches it."""
