"""The extensions knoc writes entries for itself (the README documents both)."""

SERVICE_CLASS_URI = "https://connect.actex.ai/extensions/service-class"
SERVICE_CLASSES = ("utility", "principal", "ephemeral")  # what `service_class` may declare
CONTRACT_URI = "https://possibility.space/extensions/capability-contract/v1"
