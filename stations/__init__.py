"""Player stations.

Owns the electronic player stations, player sessions, each station's credit
meter and the station websocket consumer, which sends a station only public
table events and its own private ones.
"""
