#!/usr/bin/python3
"""WS-Agreement Negotiation against a running wsag-server, driven only by Python zeep and the WSDLs.

Usage: zeep_negotiation.py BASE_URL        (e.g. http://127.0.0.1:8080)

The server must run with the operator role for the anonymous caller (admins: ['anonymous'],
WSAG_ADMINS=anonymous: /api/plan is read), a short hold (holdSeconds of a few seconds) and a
cluster exactly as large as the advance-reservation template's node count (8), so that every
capacity fact below is visible: one booking of the template's nodes fills the cluster.

Every SOAP message is a zeep operation call built from the served WSDLs (NegotiationFactory,
Negotiation, AgreementFactory, AgreementState) with zeep's public API: element and type
factories for the declared content, xsd.AnyObject(element, value) for each element in a
wildcard slot (see build_terms and accepting_offer), and the srv:NegotiationId reference
parameter of the negotiation's EPR sent as a SOAP header (_soapheaders). The plan and the
negotiation summaries are read from the JSON API with urllib.

  A. initiate (SOAP 1.1); read wsag-neg:NegotiableTemplate; an Advisory offer built from the
     advance-reservation template -> several Advisory counter-offers, each a start slot with a
     srv:Quote price, and /api/plan unchanged; a Solicited offer countering the first slot ->
     an Acceptable counter-offer with an ExpirationTime, and a hold in /api/plan; CreateAgreement
     with the counter-offer's Name, Context and Terms plus a wsag-neg:NegotiationExtension naming
     it -> AgreementState Observed; /api/plan: the agreement, no hold (capacity used once).
  B. a second negotiation (SOAP 1.2): Advisory slots now avoid the agreement's window; a
     Solicited offer for the first of them -> Acceptable (hold); a third negotiation (SOAP 1.1)
     asks for the same window at once -> Rejected, saying why; nobody accepts, the hold expires:
     it leaves /api/plan (not before its ExpirationTime); the third negotiation now gets the same
     window (Acceptable), then terminates, releasing it; CreateAgreement on the expired offer ->
     SOAP Fault OfferExpired; the fee is recorded: /api/negotiations/ID shows the hold Expired
     with `charged`, and the wsag-neg:NegotiationOffer resource property shows srv:Hold with
     srv:State Expired and srv:Charged.

Prints one JSON line; exit status 0 when every check held, 1 on a mismatch, 2 on an error.
"""

import datetime
import json
import sys
import time
import traceback
import urllib.request
import warnings

warnings.simplefilter("ignore", DeprecationWarning)  # zeep 4.2 imports the deprecated cgi module

from lxml import etree  # noqa: E402  (only to read elements zeep hands back)
from zeep import Client, xsd  # noqa: E402
from zeep.exceptions import Fault  # noqa: E402
from zeep.plugins import HistoryPlugin  # noqa: E402

# The zeep 4.2 workarounds, documented there (sending and reading xs:anyType element content,
# declared elements swallowed by a leading wildcard).
from zeep_lifecycle import any_type_children, any_type_content, declared_child  # noqa: E402
from zeep_lifecycle import BF, JSDL, SLA, SRV, WSA, WSAG  # noqa: E402  (the namespaces both scripts use)

NEG = "http://schemas.ogf.org/graap/2009/11/ws-agreement-negotiation"
ARP = "http://www.ogf.org/graap/AR/2009/04/"

PREFIXES = {"wsag": WSAG, "wsag-neg": NEG, "jsdl": JSDL, "sla": SLA, "arp": ARP}
TEMPLATE = "advance-reservation"


# --- small readers -----------------------------------------------------------------------

def iso(value):
    """A datetime as UTC ISO 8601 with Z, or None."""
    if value is None:
        return None
    return value.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc)


def srv_value(values, type_name):
    """The value of the srv element of type srv:<type_name> among a wildcard's values: zeep
    reads them typed, as the WSDLs import the srv schema."""
    for value in values if isinstance(values, list) else [values]:
        if type(value).__name__ == type_name:
            return value
    return None


def srv_text(values):
    """The text of a srv element of type xs:string (srv:Note) among a wildcard's values."""
    return next((v for v in (values if isinstance(values, list) else [values]) if isinstance(v, str)), None)


def money(value):
    """{"amount": float, "currency": str} of a srv:MoneyType value, or None."""
    if value is None:
        return None
    return {"amount": float(value._value_1), "currency": value.Currency}


def reference_parameter(epr, name):
    """The EPR's srv:<name> reference parameter, read typed (the WSDL declares it as the ports'
    input header, each with its own type), and the typed SOAP header that sends it back, marked
    wsa:IsReferenceParameter="true" (WS-Addressing SOAP binding, section 2.3)."""
    ids = [p._value_1 for p in (epr.ReferenceParameters._value_1 or []) if type(p).__name__ == f"{name}Type"]
    if len(ids) != 1:
        raise RuntimeError(f"the EPR holds no srv:{name}: {epr.ReferenceParameters}")
    return ids[0], {name: {"_value_1": ids[0], "_attr_1": {f"{{{WSA}}}IsReferenceParameter": "true"}}}


def address_of(epr):
    return epr.Address._value_1 if hasattr(epr.Address, "_value_1") else epr.Address


def client(base, port, history):
    c = Client(f"{base}/wsag/{port}?wsdl", plugins=[history])
    for prefix, namespace in PREFIXES.items():
        c.set_ns_prefix(prefix, namespace)
    return c


# --- offers --------------------------------------------------------------------------------

def offer_values(c, offer, raw_offer=None):
    """The values of an advance-reservation offer or template as zeep parsed it: the Nodes term
    (jsdl:TotalResourceCount, sla:ServiceLevel), the Window term (arp:AllocationTimeConstraint)
    and the guarantee term. raw_offer is the element as received, for the xs:anyType content
    zeep does not parse when it carries xsi:type (see any_type_children)."""
    compositor = offer.Terms.All._value_1
    terms = {c_["ServiceDescriptionTerm"].Name: c_["ServiceDescriptionTerm"] for c_ in compositor if c_.get("ServiceDescriptionTerm")}
    guarantee = next(c_["GuaranteeTerm"] for c_ in compositor if c_.get("GuaranteeTerm"))
    job = terms["Nodes"]._value_1.JobDescription
    (level,) = [v for v in job._value_1 or [] if hasattr(v, "GuaranteeLevel")]
    window = terms["Window"]._value_1
    kpi = guarantee.ServiceLevelObjective.KPITarget
    (penalty,) = guarantee.BusinessValueList.Penalty
    raw_terms = raw_offer.find(f"{{{WSAG}}}Terms") if raw_offer is not None else None

    def parsed(children):
        return {etree.QName(e).localname: c.get_element(e.tag).parse(e, c.wsdl.types) for e in children}

    (exact,) = job.Resources.TotalResourceCount.Exact
    return {
        "serviceName": terms["Nodes"].ServiceName,
        "nodeCount": int(exact._value_1),
        "guaranteeLevel": level.GuaranteeLevel,
        "start": window.StartTime,
        "end": window.EndTime,
        "guaranteeTerm": guarantee.Name,
        "obligated": guarantee.Obligated,
        "serviceScope": [s.ServiceName for s in guarantee.ServiceScope],
        "kpiName": kpi.KPIName,
        "kpiTarget": parsed(any_type_children(kpi.CustomServiceLevel, raw_terms, "CustomServiceLevel")),
        "importance": guarantee.BusinessValueList.Importance,
        "assessmentCount": penalty.AssessmentInterval.Count,
        "valueUnit": penalty.ValueUnit,
        "penalty": parsed(any_type_children(penalty.ValueExpression, raw_terms, "ValueExpression")),
    }


def build_terms(c, v):
    """wsag:Terms of an advance reservation from its values, with zeep's factories: the
    jsdl:JobDefinition and arp:AllocationTimeConstraint in the terms' wildcard slots and
    sla:ServiceLevel in JSDL's extension point as xsd.AnyObject(element, value)."""
    wsag, jsdl, sla = c.type_factory(WSAG), c.type_factory(JSDL), c.type_factory(SLA)
    JobDefinition = c.get_element("jsdl:JobDefinition")
    AllocationTimeConstraint = c.get_element("arp:AllocationTimeConstraint")
    job = JobDefinition(JobDescription=jsdl.JobDescription_Type(
        Resources=jsdl.Resources_Type(TotalResourceCount=jsdl.RangeValue_Type(Exact=[jsdl.Exact_Type(v["nodeCount"])])),
        _value_1=[xsd.AnyObject(c.get_element("sla:ServiceLevel"), sla.ServiceLevelType(GuaranteeLevel=v["guaranteeLevel"]))],
    ))
    window = AllocationTimeConstraint(StartTime=v["start"], EndTime=v["end"])

    def foreign(content):
        return [xsd.AnyObject(c.get_element(f"sla:{name}"), value) for name, value in content.items()]

    guarantee = wsag.GuaranteeTermType(
        Name=v["guaranteeTerm"],
        Obligated=v["obligated"],
        ServiceScope=[wsag.ServiceSelectorType(ServiceName=name) for name in v["serviceScope"]],
        ServiceLevelObjective=wsag.ServiceLevelObjectiveType(KPITarget=wsag.KPITargetType(
            KPIName=v["kpiName"], CustomServiceLevel=any_type_content(*foreign(v["kpiTarget"])))),
        BusinessValueList=wsag.BusinessValueListType(
            Importance=v["importance"],
            Penalty=[wsag.CompensationType(
                AssessmentInterval={"Count": v["assessmentCount"]},
                ValueUnit=v["valueUnit"],
                ValueExpression=any_type_content(*foreign(v["penalty"])),
            )],
        ),
    )
    return wsag.TermTreeType(All=wsag.TermCompositorType(_value_1=[
        {"ServiceDescriptionTerm": wsag.ServiceDescriptionTermType(
            Name="Nodes", ServiceName=v["serviceName"], _value_1=xsd.AnyObject(JobDefinition, job))},
        {"ServiceDescriptionTerm": wsag.ServiceDescriptionTermType(
            Name="Window", ServiceName=v["serviceName"], _value_1=xsd.AnyObject(AllocationTimeConstraint, window))},
        {"GuaranteeTerm": guarantee},
    ]))


def offer_state(neg, state):
    """wsag-neg:State with the one chosen (empty) state element."""
    return neg.NegotiationOfferStateType(**{state: neg.InnerNegotiationStateType()})


def negotiation_offer(c, template, values, offer_id, counter_offer_to, state):
    """A wsag-neg:NegotiationOffer from the initiator: the template's name and context, the terms
    built from values, and its offer context (CounterOfferTo, Creator, State)."""
    wsag, neg = c.type_factory(WSAG), c.type_factory(NEG)
    context = template.Context
    return c.get_element("wsag-neg:NegotiationOffer")(
        Name=template.Name,
        Context=wsag.AgreementContextType(
            ServiceProvider=context.ServiceProvider, TemplateId=context.TemplateId, TemplateName=context.TemplateName),
        Terms=build_terms(c, values),
        NegotiationOfferContext=neg.NegotiationOfferContextType(
            CounterOfferTo=counter_offer_to, Creator="NegotiationInitiator", State=offer_state(neg, state)),
        NegotiationConstraints=neg.NegotiationConstraintSectionType(),
        OfferId=offer_id,
    )


def accepting_offer(factory, negotiation_client, counter_offer, values):
    """The wsag:AgreementOffer accepting an Acceptable counter-offer (GFD.193): its Name, Context
    (the parties, ServiceProvider, template) and Terms, the Context extended by a
    wsag-neg:NegotiationExtension whose NegotiationOfferContext counters the offer's OfferId.
    The AgreementFactory WSDL does not import the negotiation schema, so the extension element
    comes from the Negotiation WSDL's client, as an xsd.AnyObject in the Context's wildcard."""
    wsag, neg = factory.type_factory(WSAG), negotiation_client.type_factory(NEG)
    context = counter_offer.Context
    extension = xsd.AnyObject(
        negotiation_client.get_element("wsag-neg:NegotiationExtension"),
        neg.NegotiationExtensionType(NegotiationOfferContext=neg.NegotiationOfferContextType(
            CounterOfferTo=counter_offer.OfferId, Creator="NegotiationInitiator", State=offer_state(neg, "Acceptable"))),
    )
    return factory.get_element("wsag:AgreementOffer")(
        Name=counter_offer.Name,
        Context=wsag.AgreementContextType(
            AgreementInitiator=context.AgreementInitiator,
            AgreementResponder=context.AgreementResponder,
            ServiceProvider=context.ServiceProvider,
            TemplateId=context.TemplateId,
            TemplateName=context.TemplateName,
            _value_1=[extension],
        ),
        Terms=build_terms(factory, values),
    )


def counter_offers(c, answer, history):
    """Each wsag-neg:NegotiationCounterOffer of a NegotiateOutput: zeep's object, its values, and a summary."""
    received = history.last_received["envelope"]
    found = []
    for offer in answer.NegotiationCounterOffer or []:
        raw = next((e for e in received.iter(f"{{{NEG}}}NegotiationCounterOffer") if e.get(f"{{{NEG}}}OfferId") == offer.OfferId), None)
        context = offer.NegotiationOfferContext
        (state,) = [name for name in ("Advisory", "Solicited", "Acceptable", "Rejected") if getattr(context.State, name, None) is not None]
        note = srv_text(getattr(context.State, state)._value_1)
        quote = srv_value(context._value_1 or [], "QuoteType")
        values = offer_values(c, offer, raw)
        found.append({
            "offer": offer,
            "values": values,
            "summary": {
                "offerId": offer.OfferId,
                "counterOfferTo": context.CounterOfferTo,
                "creator": context.Creator,
                "state": state,
                "expirationTime": iso(context.ExpirationTime),
                "note": note,
                "price": money(quote.Price) if quote is not None else None,
                "fee": money(quote.PreparatoryFee) if quote is not None else None,
                "templateId": offer.Context.TemplateId,
                "nodes": values["nodeCount"],
                "start": iso(values["start"]),
                "end": iso(values["end"]),
            },
        })
    return found


def fault_code(c, fault):
    """The ErrorCode of the bf:BaseFault in a SOAP fault's detail."""
    detail = fault.detail.find(f".//{{{BF}}}BaseFault") if fault.detail is not None else None
    if detail is None:
        return f"no bf:BaseFault in the detail of: {fault.message}"
    return declared_child(c.get_element(f"{{{BF}}}BaseFault").parse(detail, c.wsdl.types), "ErrorCode", BF)


# --- the JSON API ----------------------------------------------------------------------------

def api(base, path):
    with urllib.request.urlopen(f"{base}{path}", timeout=30) as response:
        return json.loads(response.read().decode("utf-8"))


def plan(base):
    """/api/plan bookings as [kind, id, nodes, start, end], sorted: a window's promised times (its booking adds the nodes' preparation and release)."""
    bookings = api(base, "/api/plan")["bookings"]
    return sorted([b["kind"], b["id"], b["nodes"], (b.get("promised") or b)["start"], (b.get("promised") or b)["end"]] for b in bookings)


def holds(bookings):
    return [b for b in bookings if b[0] == "hold"]


def main(base, result):
    checks = []

    def check(name, actual, expected):
        checks.append({"check": name, "ok": actual == expected, "actual": actual, "expected": expected})
        return actual

    history = HistoryPlugin()
    factory_client = client(base, "NegotiationFactory", history)
    negotiation_client = client(base, "Negotiation", history)
    agreement_factory = client(base, "AgreementFactory", history)
    state_client = client(base, "AgreementState", history)
    nf11 = factory_client.bind("NegotiationFactoryService", "NegotiationFactorySoap11Port")
    nf12 = factory_client.bind("NegotiationFactoryService", "NegotiationFactorySoap12Port")
    n11 = negotiation_client.bind("NegotiationService", "NegotiationSoap11Port")
    n12 = negotiation_client.bind("NegotiationService", "NegotiationSoap12Port")
    af11 = agreement_factory.bind("AgreementFactoryService", "AgreementFactorySoap11Port")
    af12 = agreement_factory.bind("AgreementFactoryService", "AgreementFactorySoap12Port")
    st11 = state_client.bind("AgreementStateService", "AgreementStateSoap11Port")
    neg_types = factory_client.type_factory(NEG)

    def initiate(port):
        created = port.InitiateNegotiation(NegotiationContext=neg_types.NegotiationContextType(
            NegotiationType=neg_types.NegotiationType(Negotiation={}), AgreementResponder="NegotiationResponder"))
        epr = created.CreatedNegotiationEPR
        negotiation_id, headers = reference_parameter(epr, "NegotiationId")
        return {"id": negotiation_id, "address": address_of(epr), "headers": headers}

    def negotiate(port, negotiation, *offers):
        answer = port.Negotiate(NegotiationOffer=list(offers), _soapheaders=negotiation["headers"])
        return counter_offers(negotiation_client, answer, history)

    # === A. negotiate, hold, accept ===========================================================
    first = initiate(nf11)
    result["negotiation1"] = first["id"]
    check("negotiation EPR address", first["address"], f"{base}/wsag/Negotiation")

    templates = n11.GetResourceProperty("wsag-neg:NegotiableTemplate", _soapheaders=first["headers"])
    template = next((t for t in templates if t.Name == TEMPLATE), None)
    if template is None:
        raise RuntimeError(f"no negotiable template named {TEMPLATE} among {[t.Name for t in templates]}")
    result["templateId"] = template.TemplateId
    requested = offer_values(negotiation_client, template)
    result["requested"] = {"nodes": requested["nodeCount"], "start": iso(requested["start"]), "end": iso(requested["end"])}

    plan_before = result["planBeforeAdvisory"] = plan(base)
    advisory = negotiate(n11, first, negotiation_offer(negotiation_client, template, requested, "zeep-1", template.TemplateId, "Advisory"))
    result["advisory"] = [a["summary"] for a in advisory]
    result["planAfterAdvisory"] = plan(base)
    check("an Advisory offer books nothing", result["planAfterAdvisory"], plan_before)
    check("advisory counter-offers are Advisory", sorted({a["summary"]["state"] for a in advisory}), ["Advisory"])
    check("advisory counter-offers answer zeep-1", sorted({a["summary"]["counterOfferTo"] for a in advisory}), ["zeep-1"])
    check("advisory start slots are distinct", len({a["summary"]["start"] for a in advisory}), len(advisory))
    check("every advisory slot has a srv:Quote price", all(a["summary"]["price"] and a["summary"]["price"]["amount"] > 0 for a in advisory), True)

    chosen = advisory[0]
    solicited = negotiate(n11, first, negotiation_offer(negotiation_client, template, chosen["values"], "zeep-2", chosen["summary"]["offerId"], "Solicited"))
    result["acceptableReceivedAt"] = now_utc().isoformat()
    result["acceptable"] = [s["summary"] for s in solicited]
    check("one counter-offer to the Solicited offer", len(solicited), 1)
    acceptable = solicited[0]
    check("the Solicited offer is answered Acceptable", acceptable["summary"]["state"], "Acceptable")
    check("the Acceptable offer has an ExpirationTime", acceptable["summary"]["expirationTime"] is not None, True)
    result["planWithHold"] = plan(base)

    created = af11.CreateAgreement(AgreementOffer=accepting_offer(agreement_factory, negotiation_client, acceptable["offer"], acceptable["values"]))
    result["agreementId"], epr_headers = reference_parameter(created.CreatedAgreementEPR, "AgreementId")
    state = st11.GetResourceProperty("wsag:AgreementState", _soapheaders=epr_headers)
    result["agreementState"] = declared_child(state[0], "State", WSAG) if len(state) == 1 else f"{len(state)} values"
    check("the agreement is Observed", result["agreementState"], "Observed")
    result["planAfterAgreement"] = plan(base)
    result["negotiation1Summary"] = api(base, f"/api/negotiations/{first['id']}")

    # === B. hold, competitor, expiry, fee ===================================================
    second = initiate(nf12)
    third = initiate(nf11)
    result["negotiation2"], result["negotiation3"] = second["id"], third["id"]
    advisory2 = negotiate(n12, second, negotiation_offer(negotiation_client, template, requested, "zeep-3", template.TemplateId, "Advisory"))
    result["advisory2"] = [a["summary"] for a in advisory2]
    slot = advisory2[0]

    held = negotiate(n12, second, negotiation_offer(negotiation_client, template, slot["values"], "zeep-4", slot["summary"]["offerId"], "Solicited"))
    # At once, while the hold stands: another negotiation asks for the same window.
    competitor = negotiate(n11, third, negotiation_offer(negotiation_client, template, slot["values"], "zeep-5", template.TemplateId, "Solicited"))
    competitor_answered_at = now_utc()
    result["held"] = [h["summary"] for h in held]
    result["competitor"] = [c_["summary"] for c_ in competitor]
    check("the second negotiation's Solicited offer is Acceptable", [h["summary"]["state"] for h in held], ["Acceptable"])
    expiration = held[0]["offer"].NegotiationOfferContext.ExpirationTime
    result["competitorBeforeExpiry"] = competitor_answered_at < expiration
    result["planWithSecondHold"] = plan(base)

    # Nobody accepts: wait (polling) until the hold leaves the plan.
    deadline = time.monotonic() + 30
    while holds(plan(base)) and time.monotonic() < deadline:
        time.sleep(0.1)
    gone_at = now_utc()
    result["holdGoneAfterExpiration"] = gone_at >= expiration
    result["planAfterExpiry"] = plan(base)

    again = negotiate(n11, third, negotiation_offer(negotiation_client, template, slot["values"], "zeep-6", template.TemplateId, "Solicited"))
    result["again"] = [a["summary"] for a in again]
    result["planHeldAgain"] = plan(base)
    n11.Terminate(_soapheaders=third["headers"])
    result["planAfterTerminate"] = plan(base)

    try:
        af12.CreateAgreement(AgreementOffer=accepting_offer(agreement_factory, negotiation_client, held[0]["offer"], held[0]["values"]))
        result["expiredAcceptFault"] = {"code": "no fault"}
    except Fault as fault:
        result["expiredAcceptFault"] = {"code": fault_code(agreement_factory, fault), "message": fault.message}
    result["planAfterExpiredAccept"] = plan(base)

    result["negotiation2Summary"] = api(base, f"/api/negotiations/{second['id']}")
    history_offers = n12.GetResourceProperty("wsag-neg:NegotiationOffer", _soapheaders=second["headers"])
    entry = next((o for o in history_offers if o.OfferId == held[0]["summary"]["offerId"]), None)
    hold = srv_value(entry.NegotiationOfferContext._value_1 or [], "HoldType") if entry is not None else None
    result["holdProperty"] = None if hold is None else {
        "state": hold.State,
        "expiresAt": iso(hold.ExpiresAt),
        "fee": money(hold.Fee),
        "charged": money(hold.Charged),
    }
    result["offerHistory"] = [o.OfferId for o in history_offers]

    result["ok"] = all(c_["ok"] for c_ in checks)
    result["mismatches"] = [c_ for c_ in checks if not c_["ok"]]
    result["checks"] = len(checks)
    print(json.dumps(result, default=str))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: zeep_negotiation.py BASE_URL", file=sys.stderr)
        sys.exit(2)
    partial = {}
    try:
        sys.exit(main(sys.argv[1].rstrip("/"), partial))
    except Exception as error:  # one JSON line either way, for the test to show
        traceback.print_exc()
        print(json.dumps({**partial, "ok": False, "error": f"{type(error).__name__}: {error}"}, default=str))
        sys.exit(2)
