"""Working hours as every agent reads them (the Rust SDK's `aura_sdk::hours`: the same rules,
the same messages): a working day's local "HH:MM" start and end, the end up to 24:00 and after
the start; strictly from a tool's args, leniently from a tick's profile."""

from .time import parse_hh_mm


def check_span(start: str, end: str, field: str):
    """Minutes of day of a working day's start and end, or invalid_args naming `field`."""
    from . import ToolError, quoted

    start_min = parse_hh_mm(start, f"{field}.start")
    end_min = parse_hh_mm(end, f"{field}.end")
    if end_min <= start_min:
        raise ToolError.invalid_args(
            f"{field}: end {quoted(end)} must be after start {quoted(start)} "
            "(overnight working hours are not supported; split them or use 00:00/24:00)")
    return start_min, end_min


class ProfileHours:
    """A profile's working hours ({start, end, weekdays?}), when usable: "HH:MM" start and end
    with the end after the start, and weekdays, when given, ISO weekdays 1..7 (repeats dropped,
    at least one). `read` answers None for anything else; other members are ignored."""

    def __init__(self, start, end, weekdays, start_min, end_min):
        self.start, self.end, self.weekdays = start, end, weekdays
        self.start_min, self.end_min = start_min, end_min

    @classmethod
    def read(cls, value):
        from . import ToolError

        if not isinstance(value, dict):
            return None
        start, end = value.get("start"), value.get("end")
        if not isinstance(start, str) or not isinstance(end, str):
            return None
        try:
            start_min, end_min = check_span(start, end, "working_hours")
        except ToolError:
            return None
        days = value.get("weekdays")
        if days is None:
            weekdays = None
        elif isinstance(days, list):
            weekdays = []
            for day in days:
                if isinstance(day, bool) or not isinstance(day, int) or not 1 <= day <= 7:
                    return None
                if day not in weekdays:
                    weekdays.append(day)
            if not weekdays:
                return None
        else:
            return None
        return cls(start, end, weekdays, start_min, end_min)

    def works_on(self, weekday: int) -> bool:
        """One of the given weekdays, or Monday to Friday when the profile gives none."""
        return weekday in self.weekdays if self.weekdays is not None else 1 <= weekday <= 5

    def day(self) -> dict:
        """The working day's span, as a tool's `working_hours` {start, end} takes it."""
        return {"start": self.start, "end": self.end}
