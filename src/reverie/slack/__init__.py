"""Reverie in Slack (SPEC 10, O1-O3, T1): the agent in channels, DMs and threads, the ``!memory``
commands, grants and membership. Needs the optional extra: ``pip install 'reverie[slack]'``
(``slack-bolt`` and ``slack-sdk``); the rest of Reverie imports without it.

One idea per module:

* :mod:`.app`: the bolt app and what each event does (:class:`~.app.SlackSurface`);
* :mod:`.http`: the ASGI endpoint for ``POST /slack/events``;
* :mod:`.mapping`: Slack's channels, DMs, group DMs, threads and users as Reverie's;
* :mod:`.directory`: users and channel members as Slack reports them, cached briefly;
* :mod:`.commands`: running a ``!memory`` command and answering it;
* :mod:`.delivery`: posting the outbox exactly once;
* :mod:`.home`: the App Home tab;
* :mod:`.text`: Slack's message format; :mod:`.client`: the Web API client and its errors.
"""
