"""Which profile handles a message: `gateway.profile_routes` by specificity.

A route names a platform and optionally a guild, chat and thread; it matches an
event when every field it names equals the event's. Among matching routes the most
specific wins (thread > chat > guild > platform default), the first listed on a tie.
A platform's own ``profile`` setting (the webhook's) is its default below every
route. No match: the gateway's own profile. A route to a profile this gateway does
not serve raises `UnservedProfileError`: silently answering from another profile's
memory would be worse than saying so.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from herald.config.schema_gateway import ProfileRoute
from herald.gateway.contracts import MessageEvent


class UnservedProfileError(LookupError):
    """A route chose a profile this gateway does not serve."""

    def __init__(self, profile: str, served: Collection[str]):
        self.profile = profile
        self.served = sorted(served)
        super().__init__(
            f"this chat is routed to profile {profile!r}, which this gateway does not serve "
            f"(it serves: {', '.join(self.served) or 'none'}); add it to gateway.serve_profiles "
            "or fix gateway.profile_routes"
        )


def route_specificity(route: ProfileRoute) -> int:
    """thread > chat > guild > platform default (weights keep each level above the sum
    of the ones below)."""
    return (4 if route.thread else 0) + (2 if route.chat else 0) + (1 if route.guild else 0)


def route_matches(route: ProfileRoute, event: MessageEvent) -> bool:
    if route.platform != event.platform:
        return False
    wanted = (
        (route.guild, event.guild_id),
        (route.chat, event.chat_id),
        (route.thread, event.thread_id),
    )
    return all(want is None or want == have for want, have in wanted)


def choose_route(routes: Sequence[ProfileRoute], event: MessageEvent) -> ProfileRoute | None:
    best: ProfileRoute | None = None
    for route in routes:
        if route_matches(route, event) and (
            best is None or route_specificity(route) > route_specificity(best)
        ):
            best = route
    return best


def resolve_profile(
    event: MessageEvent,
    routes: Sequence[ProfileRoute],
    *,
    default: str,
    served: Collection[str],
    platform_default: str | None = None,
) -> str:
    """The profile for `event`, or UnservedProfileError."""
    route = choose_route(routes, event)
    profile = route.profile if route is not None else (platform_default or default)
    if profile not in served:
        raise UnservedProfileError(profile, served)
    return profile


def routed_profiles(routes: Sequence[ProfileRoute]) -> list[str]:
    return list(dict.fromkeys(route.profile for route in routes))


__all__ = [
    "UnservedProfileError",
    "choose_route",
    "resolve_profile",
    "route_matches",
    "route_specificity",
    "routed_profiles",
]
